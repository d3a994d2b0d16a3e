"""What Omega station's NPCs may know: the station, Kessler's Hollow, Ceres Deep, the routes
and the factions. Each turn an NPC is given the few entries that match what the player said."""

from __future__ import annotations

from starharness.npc import Lore, LoreEntry

from .seed import BROKER, DOCK_MASTER, QUARTERMASTER, SMUGGLER

SMUGGLERS = "smugglers"
STATION_AUTHORITY = "station-authority"
CERES_COOP = "ceres-coop"

FACTIONS = {
    SMUGGLER: (SMUGGLERS,),
    BROKER: (SMUGGLERS,),
    DOCK_MASTER: (STATION_AUTHORITY,),
    QUARTERMASTER: (CERES_COOP,),
}

ENTRIES = (
    # Omega station: everyone knows it.
    LoreEntry(
        "omega-station",
        "Omega station is a ring station on the Ceres run: customs, a dock office, one bar "
        "and three thousand people who all know each other's business.",
        ("omega", "station", "ring"),
    ),
    LoreEntry(
        "omega-rusty-nebula",
        "The Rusty Nebula is Omega's only bar. Old Karsk keeps the corner table; the coffee "
        "is real and overpriced.",
        ("bar", "nebula", "drink", "coffee"),
    ),
    LoreEntry(
        "omega-customs",
        "Omega customs searches holds for nebula spice; a captain caught with it loses the "
        "cargo and pays a fine.",
        ("customs", "spice", "contraband", "fine"),
    ),
    LoreEntry(
        "omega-dock-office",
        "The dock office beside the Rusty Nebula sells berths on every ship leaving Omega; "
        "fares are posted and fixed.",
        ("dock", "office", "berth", "fare", "passage"),
    ),
    LoreEntry(
        "omega-founding",
        "Omega was built sixty years ago as a refuelling ring for the ore haulers out of "
        "Ceres Deep.",
        ("omega", "history", "founded"),
    ),
    # Kessler's Hollow.
    LoreEntry(
        "kessler-hollow",
        "Kessler's Hollow is a pirate bay in a hollowed asteroid; no navy ship docks there, "
        "and spice is sold openly.",
        ("kessler", "hollow", "pirate", "bay"),
    ),
    LoreEntry(
        "kessler-no-fighting",
        "In Kessler's Hollow nobody fights inside the bay: whoever draws first is spaced by "
        "the others.",
        ("kessler", "hollow", "fight", "law"),
    ),
    LoreEntry(
        "kessler-ice-shelves",
        "Three ice shelves ring the approach to Kessler's Hollow; pilots who know them can "
        "drift in dark.",
        ("kessler", "ice", "approach"),
    ),
    # Ceres Deep.
    LoreEntry(
        "ceres-deep",
        "Ceres Deep is a mining co-op; its miners elect their quartermaster and sell ore at "
        "co-op prices.",
        ("ceres", "deep", "mining", "ore", "coop"),
    ),
    LoreEntry(
        "ceres-cave-in",
        "The last cave-in at Ceres Deep killed eleven miners; the co-op still pays their families.",
        ("ceres", "cave", "accident", "miners"),
    ),
    # Routes.
    LoreEntry(
        "route-omega-kessler",
        "The run from Omega to Kessler's Hollow takes two days and passes the navy's patrol line.",
        ("route", "kessler", "travel", "days"),
    ),
    LoreEntry(
        "route-omega-ceres",
        "Ore haulers run between Omega and Ceres Deep in a day; they take passengers when "
        "they have room.",
        ("route", "ceres", "haulers", "travel"),
    ),
    LoreEntry(
        "route-navy-patrols",
        "Navy patrols sweep the lanes around Omega; they stop ships from Kessler's Hollow "
        "more often than others.",
        ("navy", "patrol", "route", "lanes"),
    ),
    # Goods.
    LoreEntry(
        "goods-spice",
        "Nebula spice is contraband everywhere but Kessler's Hollow; it sells for most at "
        "Ceres Deep, where nobody admits buying it.",
        ("spice", "nebula", "price", "contraband"),
    ),
    LoreEntry(
        "goods-medgel",
        "Medical gel spoils in heat; the miners at Ceres Deep never have enough of it.",
        ("medgel", "gel", "medical", "medicine"),
    ),
    # Factions, as everyone knows them.
    LoreEntry(
        "faction-authority",
        "The station authority runs Omega's docks and customs; its officers log everything "
        "and take no bribes, mostly.",
        ("authority", "officials", "faction", "customs"),
    ),
    LoreEntry(
        "faction-smugglers",
        "The old smuggling crews of the Ceres run broke up when Vex sold Karsk's crew to the "
        "navy at Kessler's Hollow.",
        ("smugglers", "crews", "faction", "vex", "karsk"),
    ),
    # Only a faction knows.
    LoreEntry(
        "smugglers-lower-locks",
        "The lower locks of the Omega ring are unwatched on odd days; crews still use them "
        "to move spice.",
        ("locks", "customs", "spice", "smuggling"),
        faction=SMUGGLERS,
    ),
    LoreEntry(
        "smugglers-signal",
        "Crews greet each other with 'cold coffee'; whoever answers 'warm enough' is one of them.",
        ("signal", "password", "coffee", "crews"),
        faction=SMUGGLERS,
    ),
    LoreEntry(
        "authority-audit",
        "The station authority audits the dock office every thirty days; the next audit is "
        "due soon.",
        ("audit", "authority", "dock", "office"),
        faction=STATION_AUTHORITY,
    ),
    LoreEntry(
        "authority-watchlist",
        "Customs keeps a watch list of ships that called at Kessler's Hollow; their holds "
        "are searched twice.",
        ("customs", "watch", "kessler", "search"),
        faction=STATION_AUTHORITY,
    ),
    LoreEntry(
        "coop-strike",
        "The co-op's miners talk about striking if ore prices fall again.",
        ("strike", "ore", "prices", "miners"),
        faction=CERES_COOP,
    ),
    # Only one NPC knows.
    LoreEntry(
        "karsk-partner",
        "Karsk's partner Mara died at Kessler's Hollow when the navy boarded their ship; Karsk "
        "keeps her compass.",
        ("partner", "mara", "compass", "kessler"),
        npc=SMUGGLER,
    ),
    LoreEntry(
        "vex-debt",
        "Vex owes the Hollow's dock bosses forty thousand credits and needs a big deal soon.",
        ("debt", "credits", "owes", "money"),
        npc=BROKER,
    ),
    LoreEntry(
        "brandt-ledger",
        "Brandt keeps a private ledger of every captain who lied on a manifest.",
        ("ledger", "manifest", "captains", "lied"),
        npc=DOCK_MASTER,
    ),
    LoreEntry(
        "okoro-shortage",
        "Okoro has two weeks of medical gel left for the miners and cannot pay Omega's prices.",
        ("medgel", "gel", "shortage", "miners"),
        npc=QUARTERMASTER,
    ),
)

LORE = Lore(ENTRIES, factions=FACTIONS)
"""Omega station's lore, with the framework's default budget (small models first)."""
