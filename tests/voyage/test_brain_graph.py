"""The offline brain's conversation graph has no dead ends.

From the greeting and from a few things a player might type, every option the NPC offers is
followed (breadth first, a few levels deep, each path replayed in a fresh encounter against the
real server, on the world file restored to its starting state first, so a replay reaches the
same state): taking an offered option is never refused, never cools the NPC, and a trade costs
what its label said. "Leave" gets a farewell and nothing else, and the sample clients close the
encounter on it (tests/web/test_web_leave.py and tests/test_talk_e2e.py).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from voyage_e2e_support import Frame, Player, serving_voyage

from starharness.voyage.content import DOCK_MASTER, PLAYER_ID, SMUGGLER

OPENINGS: tuple[tuple[str | None, int], ...] = (
    (None, 2),
    ("I'll buy 50 fuel", 2),
    ("I'll buy 5 nebula spice", 1),
    ("cheaper fuel, please", 1),
    ("any work?", 1),
)
"""What the player does first (None: listens to the greeting), and how many option picks deep
every edge after it is taken."""
LEAVE = "bye"
_MONEY = re.compile(r"\(([\d,]+)(?: cr)?\)")


@dataclass(frozen=True)
class Step:
    option: dict[str, str]
    frames: list[Frame]


def _credits(frames: Sequence[Frame]) -> int | None:
    huds = [f["data"]["credits"] for f in frames if f["t"] == "hud"]
    return huds[-1] if huds else None


def _options(frames: Sequence[Frame]) -> list[dict[str, str]]:
    found = [f["items"] for f in frames if f["t"] == "options"]
    return found[-1] if found else []


def _problems(option: dict[str, str], before: int, frames: list[Frame]) -> list[str]:
    label = option["label"]
    problems: list[str] = []
    for frame in frames:
        if frame["t"] == "error":
            problems.append(f"error {frame['code']}: {frame['message']}")
        if frame["t"] == "action" and not frame["ok"]:
            problems.append(f"refused {frame['name']}: {frame['summary']}")
        if (
            frame["t"] == "action"
            and frame["name"] == "change_attitude"
            and "-" in frame["summary"]
        ):
            problems.append(f"cooled the NPC: {frame['summary']}")
    if option["id"] == LEAVE:
        if any(frame["t"] == "action" for frame in frames):
            problems.append("leaving did something")
        return problems
    shown = _MONEY.search(label)
    after = _credits(frames)
    if shown and option["id"].startswith(("buy:", "sell:", "travel:")):
        total = int(shown[1].replace(",", ""))
        paid = None if after is None else abs(before - after)
        if paid != total:
            problems.append(f"the label says {total:,}, the deal moved {paid} credits")
    return problems


@dataclass
class World:
    """The served world file and a copy of its starting state, to restore before each replay."""

    live: Path
    start: Path
    credits: int
    """The player's credits in the starting state."""
    walks: int = 0
    """Encounters opened so far (each walk gets a fresh id)."""

    def restore(self) -> None:
        with sqlite3.connect(self.start) as source, sqlite3.connect(self.live) as target:
            source.backup(target)

    @classmethod
    def keep(cls, live: Path, credits: int) -> World:
        start = live.with_name("start.db")
        with sqlite3.connect(live) as source, sqlite3.connect(start) as target:
            source.backup(target)
        return cls(live, start, credits)


async def _walk(
    me: Player, world: World, npc: str, opening: str | None, path: list[dict[str, str]]
) -> Any:
    """Replay `opening` and `path` in a new encounter; the frames of each step."""
    world.restore()
    world.walks += 1
    encounter = f"e{world.walks}"
    frames = await me.open(encounter, npc)
    assert frames[0]["t"] == "encounter.opened", frames
    credits = _credits(frames)
    if opening is not None:
        frames = await me.say(encounter, opening)
    steps: list[Step] = []
    for option in path:
        offered = {item["id"] for item in _options(frames)}
        assert option["id"] in offered, f"{option} not offered on replay: {offered}"
        frames = await me.pick(encounter, option["id"])
        steps.append(Step(option, frames))
    await me.close(encounter)
    return frames, steps, credits


async def _explore(
    me: Player, world: World, npc: str, opening: str | None, depth: int, failures: list[str]
) -> int:
    """Breadth first over option picks; each edge is one replayed walk."""
    root, _, _ = await _walk(me, world, npc, opening, [])
    frontier: list[tuple[list[dict[str, str]], list[dict[str, str]]]] = [([], _options(root))]
    checked = 0
    for _depth in range(depth):
        next_frontier: list[tuple[list[dict[str, str]], list[dict[str, str]]]] = []
        for path, offered in frontier:
            where = f"{npc} {opening!r} {_labels(path)}"
            if len(offered) < 2:
                failures.append(f"{where}: offers {len(offered)} option(s): {offered}")
            for option in offered:
                _after, steps, _start = await _walk(me, world, npc, opening, [*path, option])
                earlier = [f for step in steps[:-1] for f in step.frames]
                before = _credits(earlier) or world.credits
                checked += 1
                for problem in _problems(option, before, steps[-1].frames):
                    failures.append(f"{npc} {opening!r} {_labels([*path, option])}: {problem}")
                if option["id"] != LEAVE:
                    next_frontier.append(([*path, option], _options(steps[-1].frames)))
        frontier = next_frontier
    return checked


def _labels(path: list[dict[str, str]]) -> list[str]:
    return [option["label"] for option in path]


@pytest.mark.slow
async def test_every_offered_option_is_takeable_and_leave_ends_it(tmp_path: Path) -> None:
    failures: list[str] = []
    checked = 0
    async with (
        serving_voyage(tmp_path) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        welcome = await me.hello()
        world = World.keep(tmp_path / "world.db", welcome["hud"]["credits"])
        for opening, depth in OPENINGS:
            for npc in (SMUGGLER, DOCK_MASTER):
                checked += await _explore(me, world, npc, opening, depth, failures)
    assert checked > 40, f"only {checked} options explored"
    assert failures == [], "\n".join(sorted(set(failures)))
