"""The scene an NPC sees each turn: place, time, its wares, the player, news and memories."""

from __future__ import annotations

from dataclasses import dataclass

from ..content.prices import BUYS_LINE as BUYS
from ..content.prices import SELLS_LINE as SELLS
from .memory import MemoryBudget, summarise_memories
from .reader import WorldReader
from .rows import Actor, Intel, Location, Memory, NewsItem, Quest, Route

PLAYER = "The player: "
ATTITUDE = "Attitude to the player: "
PLAYER_JOBS = "Jobs the player took on here: "
OPEN_JOBS = "Jobs on offer to the player: "
INTEL = "Intel for sale: "
PASSAGE = "Passage for sale: "
MEMORIES = "Memories of the player: "

INTEL_MEMORY = "intel"
"""The memory kind a sale of intel leaves (the intel action writes it)."""
NEWS_DAYS = 7
NEWS_ITEMS = 3
CHARS_PER_TOKEN = 4
"""The documented estimate used for scene budgets when no tokenizer is at hand."""

_ATTITUDE_WORDS = (
    (-29, "hostile"),
    (-9, "unfriendly"),
    (20, "neutral"),
    (60, "friendly"),
)
"""(exclusive upper bound, word): -100..-30 hostile, -29..-10 unfriendly, -9..19 neutral,
20..59 friendly, 60..100 trusted."""


@dataclass(frozen=True, slots=True)
class Ware:
    good_id: str
    name: str
    price: int
    units: int


def attitude_word(score: int) -> str:
    """One word for an attitude score (see _ATTITUDE_WORDS)."""
    for upper, word in _ATTITUDE_WORDS:
        if score < upper:
            return word
    return "trusted"


def estimate_tokens(text: str) -> int:
    """Tokens by the 4-characters-per-token estimate."""
    return -(-len(text) // CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class NpcSide:
    """The part of a scene that is the same for every player who meets this NPC now."""

    day: int
    place: Location
    npc: Actor
    sells: list[Ware]
    buys: list[Ware]
    open_quests: list[Quest]
    intel: list[Intel]
    routes: list[Route]
    route_names: dict[str, str]
    news: list[NewsItem]
    good_names: dict[str, str]


@dataclass(frozen=True, slots=True)
class SceneData:
    """Everything a scene shows, read in one snapshot: the NPC's side, then the player's."""

    side: NpcSide
    player: Actor
    player_hold: dict[str, int]
    attitude: int
    player_quests: list[Quest]
    intel: list[Intel]
    """The NPC's intel this player has not bought yet."""
    memories: list[Memory]


NPC_SIDE_TABLES = frozenset(
    {
        "actors",
        "cargo",
        "clock",
        "goods",
        "intel",
        "locations",
        "market",
        "quests",
        "routes",
        "trade_lines",
        "world_events",
    }
)
"""Every table `gather_npc_side` reads: a commit to none of these (memories, attitudes, the
audit) leaves a cached NPC side true."""


def gather_npc_side(reader: WorldReader, npc_id: str) -> NpcSide:
    """Read what every player's scene with this NPC shares; inside one snapshot."""
    npc = reader.require_actor(npc_id)
    place = reader.location(npc.location_id) or Location(npc.location_id, npc.location_id, "")
    good_names = {good.id: good.name for good in reader.goods()}
    prices = {quote.good_id: quote.price for quote in reader.market(npc.location_id)}
    hold = reader.cargo(npc_id)
    sells: list[Ware] = []
    buys: list[Ware] = []
    for line in reader.trade_lines(npc_id):
        price = prices.get(line.good_id)
        if price is None:
            continue
        ware = Ware(line.good_id, good_names[line.good_id], price, hold.get(line.good_id, 0))
        if line.sells:
            sells.append(ware)
        if line.buys:
            buys.append(ware)
    day = reader.day()
    routes = [route for route in reader.routes_from(npc.location_id) if route.seller_id == npc_id]
    return NpcSide(
        day=day,
        place=place,
        npc=npc,
        sells=sells,
        buys=buys,
        open_quests=[q for q in reader.quests_given_by(npc_id) if q.status == "open"],
        intel=reader.intel_of(npc_id),
        routes=routes,
        route_names={loc.id: loc.name for loc in reader.locations()},
        news=reader.news(npc.location_id, since_day=max(1, day - NEWS_DAYS), limit=NEWS_ITEMS),
        good_names=good_names,
    )


def gather_scene(
    reader: WorldReader, npc_id: str, player_id: str, npc_side: NpcSide | None = None
) -> SceneData:
    """Read what the scene needs; call inside one snapshot so the parts agree.

    `npc_side`, when given, must have been read at this same state of the world.
    """
    side = npc_side if npc_side is not None else gather_npc_side(reader, npc_id)
    player = reader.require_actor(player_id)
    memories = reader.memories(npc_id, player_id)
    # What this player bought already is no longer for sale to them.
    bought = {memory.ref for memory in memories if memory.kind == INTEL_MEMORY}
    return SceneData(
        side=side,
        player=player,
        player_hold=reader.cargo(player_id),
        attitude=reader.attitude(npc_id, player_id),
        player_quests=[q for q in reader.quests_of(player_id) if q.giver_id == npc_id],
        intel=[item for item in side.intel if item.id not in bought],
        memories=memories,
    )


def render_scene(data: SceneData, budget: MemoryBudget | None = None) -> str:
    """The scene as text, in a fixed order so that diffs between turns stay small.

    In the third person, as a sheet: a scene that says "you have 48,000 credits" comes back
    from a small model to the player as "You have 48,000 credits".

    What every player's scene with this NPC shares comes first (`render_opening`), the player
    after it: a caching model server evaluates the opening before anyone meets the NPC, and a
    greeting then evaluates only the player's lines.
    """
    hold = _hold(data.player_hold, data.side.good_names)
    lines = [
        render_opening(data.side),
        f"{PLAYER}{data.player.name}, {data.player.credits:,} credits; hold: {hold}.",
    ]
    lines.append(f"{ATTITUDE}{data.attitude} ({attitude_word(data.attitude)}).")
    active = [q for q in data.player_quests if q.status == "accepted"]
    if active:
        lines.append(PLAYER_JOBS + "; ".join(_quest(q) for q in active) + ".")
    if data.intel:
        lines.append(INTEL + "; ".join(_intel(item) for item in data.intel) + ".")
    lines.append(MEMORIES + summarise_memories(data.memories, data.side.good_names, budget))
    return "\n".join(lines)


def render_opening(side: NpcSide) -> str:
    """The lines every scene with this NPC begins with now, whoever the player: place and time,
    the NPC's money and wares, its open jobs, passage and news."""
    lines = [
        f"Day {side.day}. {side.place.name}: {side.place.description}".rstrip(": "),
        f"{side.npc.name}: {side.npc.credits:,} credits.",
    ]
    if side.sells:
        lines.append(f"{SELLS}" + _wares(side.sells, True))
    if side.buys:
        lines.append(f"{BUYS}" + _wares(side.buys, False))
    if side.open_quests:
        lines.append(OPEN_JOBS + "; ".join(_quest(q) for q in side.open_quests) + ".")
    if side.routes:
        lines.append(PASSAGE + "; ".join(_route(r, side.route_names) for r in side.routes))
    if side.news:
        lines.append("News here: " + " ".join(f"(day {n.day}) {n.headline}" for n in side.news))
    return "\n".join(lines)


def _wares(wares: list[Ware], with_units: bool) -> str:
    if with_units:
        return ", ".join(f"{w.name} [{w.good_id}] {w.units} at {w.price:,}" for w in wares) + "."
    return ", ".join(f"{w.name} [{w.good_id}] {w.price:,}" for w in wares) + "."


def _hold(hold: dict[str, int], names: dict[str, str]) -> str:
    if not hold:
        return "empty"
    return ", ".join(f"{qty} {names.get(good, good)}" for good, qty in hold.items())


def _quest(quest: Quest) -> str:
    # What the job takes, in ids: a reader can tell whether the player holds enough.
    wants = f"{quest.qty} [{quest.good_id}]"
    text = f'[{quest.id}] "{quest.title}", reward {quest.reward:,} for {wants}'
    if quest.status == "open" and quest.min_attitude > -100:
        text += f" (needs attitude {quest.min_attitude})"
    return text


def _intel(item: Intel) -> str:
    title = f'[{item.id}] {item.kind} "{item.title}"'
    price = f"{item.price:,}" if item.price else "free"
    return f"{title} {price} (needs attitude {item.min_attitude})"


def _route(route: Route, names: dict[str, str]) -> str:
    return f"{names.get(route.to_id, route.to_id)} [{route.to_id}] {route.fare:,}, {route.days}d"
