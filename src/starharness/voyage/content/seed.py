"""The starting world of Omega station: places, goods, prices, people and what they know."""

from __future__ import annotations

from dataclasses import dataclass

from .archetypes import FIXER, OFFICIAL, TRADER
from .personas import BROKER_PERSONA, DOCK_MASTER_PERSONA, QUARTERMASTER_PERSONA, SMUGGLER_PERSONA

START_DAY = 1
ATTITUDE_RANGE = (-100, 100)
PLAYER_ID = "player-1"


@dataclass(frozen=True, slots=True)
class LocationSeed:
    id: str
    name: str
    description: str


@dataclass(frozen=True, slots=True)
class GoodSeed:
    id: str
    name: str
    base_price: int
    contraband: bool = False


@dataclass(frozen=True, slots=True)
class MarketSeed:
    location_id: str
    good_id: str
    price: int
    stock: int


@dataclass(frozen=True, slots=True)
class ActorSeed:
    id: str
    name: str
    kind: str
    archetype: str
    location_id: str
    credits: int
    persona: str = ""


@dataclass(frozen=True, slots=True)
class CargoSeed:
    actor_id: str
    good_id: str
    qty: int


@dataclass(frozen=True, slots=True)
class TradeLineSeed:
    npc_id: str
    good_id: str
    sells: bool
    buys: bool
    restock_to: int = 0


@dataclass(frozen=True, slots=True)
class AttitudeSeed:
    npc_id: str
    target_id: str
    score: int


@dataclass(frozen=True, slots=True)
class RouteSeed:
    from_id: str
    to_id: str
    seller_id: str
    fare: int
    days: int


@dataclass(frozen=True, slots=True)
class IntelSeed:
    id: str
    npc_id: str
    kind: str
    title: str
    text: str
    price: int
    min_attitude: int


@dataclass(frozen=True, slots=True)
class QuestSeed:
    id: str
    giver_id: str
    title: str
    good_id: str
    qty: int
    reward: int
    min_attitude: int = -100


@dataclass(frozen=True, slots=True)
class WorldSeed:
    """Everything a fresh world starts with."""

    start_day: int
    locations: tuple[LocationSeed, ...]
    goods: tuple[GoodSeed, ...]
    market: tuple[MarketSeed, ...]
    actors: tuple[ActorSeed, ...]
    cargo: tuple[CargoSeed, ...]
    trade_lines: tuple[TradeLineSeed, ...]
    attitudes: tuple[AttitudeSeed, ...]
    routes: tuple[RouteSeed, ...]
    intel: tuple[IntelSeed, ...]
    quests: tuple[QuestSeed, ...]


OMEGA = "omega-station"
KESSLER = "kessler-hollow"
CERES = "ceres-deep"

SMUGGLER = "npc-karsk"
DOCK_MASTER = "npc-brandt"
BROKER = "npc-vex"
QUARTERMASTER = "npc-okoro"

LOCATIONS = (
    LocationSeed(
        OMEGA,
        "Omega station",
        "The Rusty Nebula, a dim bar on the docking ring; the dock office is next door.",
    ),
    LocationSeed(
        KESSLER,
        "Kessler's Hollow",
        "A pirate bay dug into a dead asteroid. No customs, good prices for the wrong goods.",
    ),
    LocationSeed(
        CERES,
        "Ceres Deep",
        "The mining co-op's depot. Ore is cheap here; everything else is shipped in.",
    ),
)

GOODS = (
    GoodSeed("fuel", "fuel cells", 450),
    GoodSeed("ore", "titanium ore", 300),
    GoodSeed("medgel", "medical gel", 900),
    GoodSeed("parts", "drive parts", 1_600),
    GoodSeed("spice", "nebula spice", 2_400, contraband=True),
    GoodSeed("coffee", "real coffee", 150),
)

# Prices differ by location: that difference is the whole trading game.
MARKET = (
    MarketSeed(OMEGA, "fuel", 450, 200),
    MarketSeed(OMEGA, "ore", 380, 80),
    MarketSeed(OMEGA, "medgel", 1_100, 30),
    MarketSeed(OMEGA, "parts", 1_500, 40),
    MarketSeed(OMEGA, "spice", 2_900, 8),
    MarketSeed(OMEGA, "coffee", 160, 100),
    MarketSeed(KESSLER, "fuel", 520, 60),
    MarketSeed(KESSLER, "ore", 340, 50),
    MarketSeed(KESSLER, "medgel", 1_400, 10),
    MarketSeed(KESSLER, "parts", 1_200, 25),
    MarketSeed(KESSLER, "spice", 2_000, 60),
    MarketSeed(KESSLER, "coffee", 260, 20),
    MarketSeed(CERES, "fuel", 400, 300),
    MarketSeed(CERES, "ore", 220, 500),
    MarketSeed(CERES, "medgel", 800, 80),
    MarketSeed(CERES, "parts", 1_900, 10),
    MarketSeed(CERES, "spice", 3_400, 2),
    MarketSeed(CERES, "coffee", 240, 30),
)

ACTORS = (
    ActorSeed(PLAYER_ID, "Captain Ash", "player", "captain", OMEGA, 12_000),
    # Karsk and Vex are both fixers: one archetype, one shared preset, two personas.
    ActorSeed(SMUGGLER, "Jonah Karsk", "npc", FIXER, OMEGA, 48_000, SMUGGLER_PERSONA),
    ActorSeed(DOCK_MASTER, "Ilse Brandt", "npc", OFFICIAL, OMEGA, 30_000, DOCK_MASTER_PERSONA),
    ActorSeed(BROKER, "Vex", "npc", FIXER, KESSLER, 15_000, BROKER_PERSONA),
    ActorSeed(QUARTERMASTER, "Nadia Okoro", "npc", TRADER, CERES, 25_000, QUARTERMASTER_PERSONA),
)

# The player starts with an empty hold; traders start with what they sell. Every good an NPC
# sells has a buyer at Omega station, and every place has a passage seller who lets a player
# short of the fare work the voyage off: no player is ever stranded (tests/voyage/test_game_walk).
CARGO = (
    CargoSeed(SMUGGLER, "fuel", 40),
    CargoSeed(SMUGGLER, "medgel", 12),
    CargoSeed(SMUGGLER, "spice", 6),
    CargoSeed(DOCK_MASTER, "fuel", 60),
    CargoSeed(DOCK_MASTER, "parts", 10),
    CargoSeed(BROKER, "spice", 30),
    CargoSeed(BROKER, "parts", 15),
    CargoSeed(QUARTERMASTER, "ore", 100),
    CargoSeed(QUARTERMASTER, "medgel", 25),
    CargoSeed(QUARTERMASTER, "fuel", 80),
)

TRADE_LINES = (
    TradeLineSeed(SMUGGLER, "fuel", sells=True, buys=False, restock_to=40),
    TradeLineSeed(SMUGGLER, "medgel", sells=True, buys=True, restock_to=12),
    TradeLineSeed(SMUGGLER, "spice", sells=True, buys=True, restock_to=6),
    TradeLineSeed(SMUGGLER, "parts", sells=False, buys=True),
    TradeLineSeed(SMUGGLER, "coffee", sells=False, buys=True),
    TradeLineSeed(DOCK_MASTER, "fuel", sells=True, buys=True, restock_to=60),
    TradeLineSeed(DOCK_MASTER, "parts", sells=True, buys=False, restock_to=10),
    TradeLineSeed(DOCK_MASTER, "ore", sells=False, buys=True),
    TradeLineSeed(BROKER, "spice", sells=True, buys=True, restock_to=30),
    TradeLineSeed(BROKER, "parts", sells=True, buys=True, restock_to=15),
    TradeLineSeed(BROKER, "medgel", sells=False, buys=True),
    TradeLineSeed(BROKER, "fuel", sells=False, buys=True),
    TradeLineSeed(BROKER, "ore", sells=False, buys=True),
    TradeLineSeed(QUARTERMASTER, "ore", sells=True, buys=False, restock_to=100),
    # Okoro buys back what she sells (below her selling price): a hold of fuel or gel
    # brought here is never dead weight.
    TradeLineSeed(QUARTERMASTER, "medgel", sells=True, buys=True, restock_to=25),
    TradeLineSeed(QUARTERMASTER, "fuel", sells=True, buys=True, restock_to=80),
    TradeLineSeed(QUARTERMASTER, "parts", sells=False, buys=True),
    TradeLineSeed(QUARTERMASTER, "coffee", sells=False, buys=True),
)

ATTITUDES = (
    AttitudeSeed(SMUGGLER, PLAYER_ID, 0),
    AttitudeSeed(DOCK_MASTER, PLAYER_ID, 10),
    AttitudeSeed(BROKER, PLAYER_ID, -30),
    AttitudeSeed(QUARTERMASTER, PLAYER_ID, 5),
    AttitudeSeed(SMUGGLER, BROKER, -20),
    AttitudeSeed(BROKER, SMUGGLER, -10),
)

ROUTES = (
    RouteSeed(OMEGA, KESSLER, DOCK_MASTER, fare=2_500, days=2),
    RouteSeed(OMEGA, CERES, DOCK_MASTER, fare=1_800, days=1),
    RouteSeed(KESSLER, OMEGA, BROKER, fare=3_500, days=2),
    RouteSeed(CERES, OMEGA, QUARTERMASTER, fare=1_800, days=1),
)

INTEL = (
    IntelSeed(
        "intel-patrols",
        SMUGGLER,
        "rumour",
        "customs patrol times",
        "Customs sweeps the Omega ring on even days; odd days the lower locks are unwatched.",
        price=1_500,
        min_attitude=20,
    ),
    IntelSeed(
        "intel-shortcut",
        SMUGGLER,
        "route",
        "the Kessler shortcut",
        "Burn past the third ice shelf and drift dark: Kessler's Hollow in a day, no patrols.",
        price=4_000,
        min_attitude=40,
    ),
    IntelSeed(
        "intel-spice-buyers",
        BROKER,
        "rumour",
        "who pays for spice",
        "Ceres miners pay triple for spice, and the co-op looks the other way after shift.",
        price=2_500,
        min_attitude=10,
    ),
    IntelSeed(
        "intel-hiring",
        DOCK_MASTER,
        "rumour",
        "who is hiring",
        "Okoro at Ceres Deep is short of drive parts and pays well for them.",
        price=0,
        min_attitude=0,
    ),
)

QUESTS = (
    QuestSeed("quest-medgel", SMUGGLER, "bring 10 medical gel for a clinic", "medgel", 10, 14_000),
    QuestSeed("quest-parts", BROKER, "bring 6 drive parts", "parts", 6, 12_000, min_attitude=0),
    QuestSeed("quest-coffee", QUARTERMASTER, "bring 30 real coffee", "coffee", 30, 9_000),
)

OMEGA_STATION = WorldSeed(
    start_day=START_DAY,
    locations=LOCATIONS,
    goods=GOODS,
    market=MARKET,
    actors=ACTORS,
    cargo=CARGO,
    trade_lines=TRADE_LINES,
    attitudes=ATTITUDES,
    routes=ROUTES,
    intel=INTEL,
    quests=QUESTS,
)
"""The world `open_world` and `star-harness seed` create."""
