"""Reading the scene text the way a model would: what is for sale, who is here, what happened.

The brain sees the world only through this text, never through the store.
"""

from __future__ import annotations

import re
from copy import deepcopy
from dataclasses import dataclass, field, fields
from itertools import takewhile

from ..content.prices import BUYS_LINE as _BUYS
from ..content.prices import SELLS_LINE as _SELLS

_NUMBER = r"\d{1,3}(?:,\d{3})*|\d+"

_DAY = re.compile(r"^Day (\d+)\. ([^:]+)")
_SELF = re.compile(r"^([^:]+): (" + _NUMBER + r") credits\.$")
_PLAYER = re.compile(r"^The player: (.+), (" + _NUMBER + r") credits; hold: (.*)\.$")
_ATTITUDE = re.compile(r"^Attitude to the player: (-?\d+) \((\w+)\)\.$")
_THEIR_JOBS = "Jobs the player took on here: "
_OPEN_JOBS = "Jobs on offer to the player: "
_INTEL = "Intel for sale: "
_PASSAGE = "Passage for sale: "
_NEWS = "News here: "
_MEMORIES = "Memories of the player: "
_ITEM_SPLIT = re.compile(r", (?=[^,\[\]]+ \[)")
_SOLD_WARE = re.compile(r"^(.+) \[([^\]]+)\] (\d+) at (" + _NUMBER + r")$")
_BOUGHT_WARE = re.compile(r"^(.+) \[([^\]]+)\] (" + _NUMBER + r")$")
_HELD = re.compile(r"^(" + _NUMBER + r") (.+)$")
_JOB = re.compile(
    r'\[([^\]]+)\] "([^"]*)", reward ('
    + _NUMBER
    + r")(?: for (\d+) \[([^\]]+)\])?(?: \(needs attitude (-?\d+)\))?"
)
_INTEL_ITEM = re.compile(
    r'\[([^\]]+)\] (\w+) "([^"]*)" (' + _NUMBER + r"|free) \(needs attitude (-?\d+)\)"
)
_ROUTE = re.compile(r"^(.+) \[([^\]]+)\] (" + _NUMBER + r"), (\d+)d$")
_NEWS_ITEM = re.compile(r"\(day (\d+)\) ")
_DEAL = re.compile(r"\bthey (bought|sold) (" + _NUMBER + r") (.+?) for (" + _NUMBER + r")", re.I)
_MEMORY_COUNT = re.compile(r"^(\d+) memories since day (\d+)\.", re.M)
_QUOTED = re.compile(r"^- day \d+: (.*)$", re.M)
_HEARSAY_FOLDED = re.compile(r"\b(\d+) (?:witnessed|gossip) memories")
_SEEN = re.compile(r"^Saw them ")
_SAID = re.compile(r"^(.+?) says: (.*)$")

CHANGES_HEADING = "Changed since the scene above (the rest is as it was):"
"""The first line of the block the NPC framework logs, on a local model, when the scene changed
(`starharness.npc.encounter.scene_changes`; a test holds the two equal)."""
_GONE = "No longer so: "
SCENE_MARK = "Attitude to the player:"
"""A line every scene has; a user message containing it is a scene, not the player."""


@dataclass(frozen=True, slots=True)
class Ware:
    """A good the NPC trades; `units` is what it holds (None on the buying list)."""

    good_id: str
    name: str
    price: int
    units: int | None = None


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    title: str
    reward: int
    min_attitude: int | None
    good_id: str = ""
    qty: int = 0
    """What the job takes (0: the scene did not say)."""


@dataclass(frozen=True, slots=True)
class IntelOffer:
    id: str
    kind: str
    title: str
    price: int
    min_attitude: int


@dataclass(frozen=True, slots=True)
class Passage:
    destination_id: str
    name: str
    fare: int
    days: int


@dataclass(frozen=True, slots=True)
class Deal:
    """A deal as the NPC remembers it: what the player did, with what, for how much in all."""

    action: str
    qty: int
    good: str
    total: int


@dataclass(slots=True)
class SceneView:
    """The parts of a scene the brain acts on."""

    day: int = 0
    place: str = ""
    npc_name: str = ""
    npc_credits: int = 0
    sells: list[Ware] = field(default_factory=list[Ware])
    buys: list[Ware] = field(default_factory=list[Ware])
    player_name: str = ""
    player_credits: int = 0
    player_hold: dict[str, int] = field(default_factory=dict[str, int])
    """Good name to units."""
    attitude: int = 0
    attitude_word: str = "neutral"
    their_jobs: list[Job] = field(default_factory=list[Job])
    open_jobs: list[Job] = field(default_factory=list[Job])
    intel: list[IntelOffer] = field(default_factory=list[IntelOffer])
    passages: list[Passage] = field(default_factory=list[Passage])
    news: list[str] = field(default_factory=list[str])
    memory_count: int = 0
    hearsay_count: int = 0
    """Of memory_count, what the NPC only saw happen to another or was told."""
    last_deal: Deal | None = None
    word: str | None = None
    """The newest thing the NPC saw or heard about the player, in its own words to them."""

    @property
    def met_before(self) -> bool:
        return self.memory_count > self.hearsay_count

    def sold(self, good_id: str) -> Ware | None:
        return next((ware for ware in self.sells if ware.good_id == good_id), None)

    def bought(self, good_id: str) -> Ware | None:
        return next((ware for ware in self.buys if ware.good_id == good_id), None)

    def held(self, good_id: str) -> int:
        """Units of a good in the player's hold (the hold is listed by name)."""
        names = {ware.name for ware in (*self.sells, *self.buys) if ware.good_id == good_id}
        return sum(qty for name, qty in self.player_hold.items() if name in names)

    def can_hand_over(self, job: Job) -> bool:
        """Whether the player's hold has all that `job` takes (so handing it over commits)."""
        return self.held(job.good_id) >= job.qty

    def goods(self) -> dict[str, str]:
        """Every good named in the scene: id to name."""
        return {ware.good_id: ware.name for ware in (*self.sells, *self.buys)}


def is_scene(text: str) -> bool:
    return SCENE_MARK in text


def parse_scene(text: str) -> SceneView:
    """Read a scene; lines it does not recognise are skipped, as a reader would."""
    view = SceneView()
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith(_MEMORIES):
            _read_memories(view, "\n".join([line[len(_MEMORIES) :], *lines[index + 1 :]]))
            break
        _read_line(view, line.strip())
    return view


def is_scene_changes(text: str) -> bool:
    return text.startswith(CHANGES_HEADING)


def apply_changes(view: SceneView, text: str) -> SceneView:
    """The scene `view` was read from, changed as the changes block `text` says (the NPC
    framework logs one on a local model instead of the whole scene again): its lines are read
    over the view, and what a line no longer so had set is cleared. Memories are read from the
    new lines alone (the block leaves out the memories that did not change)."""
    changed = deepcopy(view)
    blank = SceneView()
    lines = text.splitlines()[1:]
    for index, line in enumerate(lines):
        if line.startswith(_GONE):
            was = SceneView()
            _read_line(was, line[len(_GONE) :].strip())
            for name in (f.name for f in fields(SceneView)):
                if getattr(was, name) != getattr(blank, name):
                    setattr(changed, name, deepcopy(getattr(blank, name)))
        elif line.startswith(_MEMORIES):
            rest = takewhile(lambda more: not more.startswith(_GONE), lines[index + 1 :])
            _read_memories(changed, "\n".join([line[len(_MEMORIES) :], *rest]))
        elif not line.startswith("- "):
            _read_line(changed, line.strip())
    return changed


def number(text: str) -> int:
    return int(text.replace(",", ""))


def _read_line(view: SceneView, line: str) -> None:
    if found := _DAY.match(line):
        view.day, view.place = int(found[1]), found[2].strip()
    elif found := _SELF.match(line):
        view.npc_name, view.npc_credits = found[1], number(found[2])
    elif line.startswith(_SELLS):
        view.sells = [ware for item in _items(line, _SELLS) if (ware := _sold(item))]
    elif line.startswith(_BUYS):
        view.buys = [ware for item in _items(line, _BUYS) if (ware := _bought(item))]
    elif found := _PLAYER.match(line):
        view.player_name, view.player_credits = found[1], number(found[2])
        view.player_hold = _hold(found[3])
    elif found := _ATTITUDE.match(line):
        view.attitude, view.attitude_word = int(found[1]), found[2]
    elif line.startswith(_THEIR_JOBS):
        view.their_jobs = _jobs(line)
    elif line.startswith(_OPEN_JOBS):
        view.open_jobs = _jobs(line)
    elif line.startswith(_INTEL):
        view.intel = [
            IntelOffer(m[1], m[2], m[3], 0 if m[4] == "free" else number(m[4]), int(m[5]))
            for m in _INTEL_ITEM.finditer(line)
        ]
    elif line.startswith(_PASSAGE):
        view.passages = [
            Passage(m[2], m[1], number(m[3]), int(m[4]))
            for part in line[len(_PASSAGE) :].split("; ")
            if (m := _ROUTE.match(part.strip().rstrip(".")))
        ]
    elif line.startswith(_NEWS):
        parts = _NEWS_ITEM.split(line[len(_NEWS) :])
        view.news = [headline.strip() for headline in parts[2::2] if headline.strip()]


def _items(line: str, prefix: str) -> list[str]:
    return _ITEM_SPLIT.split(line[len(prefix) :].rstrip("."))


def _sold(item: str) -> Ware | None:
    found = _SOLD_WARE.match(item.strip())
    return Ware(found[2], found[1], number(found[4]), int(found[3])) if found else None


def _bought(item: str) -> Ware | None:
    found = _BOUGHT_WARE.match(item.strip())
    return Ware(found[2], found[1], number(found[3])) if found else None


def _hold(text: str) -> dict[str, int]:
    if text.strip() == "empty":
        return {}
    hold: dict[str, int] = {}
    for part in re.split(r", (?=\d)", text):
        if found := _HELD.match(part.strip()):
            hold[found[2]] = number(found[1])
    return hold


def _jobs(line: str) -> list[Job]:
    return [
        Job(
            m[1],
            m[2],
            number(m[3]),
            int(m[6]) if m[6] is not None else None,
            m[5] or "",
            int(m[4]) if m[4] is not None else 0,
        )
        for m in _JOB.finditer(line)
    ]


def _read_memories(view: SceneView, text: str) -> None:
    if found := _MEMORY_COUNT.search(text):
        view.memory_count = int(found[1])
    hearsay = [
        quoted for quoted in _QUOTED.findall(text) if _SEEN.match(quoted) or _SAID.match(quoted)
    ]
    view.hearsay_count = len(hearsay) + sum(int(n) for n in _HEARSAY_FOLDED.findall(text))
    if hearsay:
        view.word = _retold(hearsay[-1])
    # Deals seen or heard of are not the NPC's own: the last deal is read without them.
    own = "\n".join(
        line for line in text.splitlines() if not any(line.endswith(h) for h in hearsay)
    )
    deals = list(_DEAL.finditer(own))
    if deals:
        last = deals[-1]
        view.last_deal = Deal(last[1].lower(), number(last[2]), last[3], number(last[4]))


def _retold(memory: str) -> str:
    """What an NPC says to the player about a memory it saw or heard."""
    said = _SAID.match(memory)
    if said is None:
        return "I saw you " + memory[len("Saw them ") :]
    teller, core = said[1], said[2]
    while (inner := _SAID.match(core)) is not None:
        core = inner[2]
    core = re.sub(r" \([^)]*\)", "", core).rstrip(".")
    core = re.sub(r"\bthem\b", "you", re.sub(r"\bThey\b", "you", core))
    return f"{teller} tells me: {core[:1].lower()}{core[1:]}."
