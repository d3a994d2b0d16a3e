"""Omega station played for real over many encounters, days and places: no loops, no dead ends.

Hypothesis draws a walk (a list of choices); each walk plays on a fresh world through the real
server and WebSocket, the NPCs played by the offline brain: open an encounter with someone where
the player stands, pick any option or offer the NPC shows, leave, let a day pass, travel. Every
offer the player accepts must commit (the NPC's own price is never refused), and no option may
be refused or answered with an error. At the end of every walk the player must still have a way
on: a passage seller where they stand offers a berth they can take, and taking it moves them.
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from voyage_e2e_support import Frame, Player, line, serving_voyage

from starharness.mockllm.capabilities import FULL, LLAMA_CPP, MockCapabilities
from starharness.voyage.content import PLAYER_ID

STEPS = 36
"""Moves per walk: enough for several encounters, a trip and a few days."""


@dataclass
class Walk:
    me: Player
    npcs: dict[str, str]
    """NPC id to the location it stands at."""
    hud: dict[str, Any]
    choices: list[int]
    at: int = 0
    encounter: str | None = None
    options: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    opened: int = 0
    trail: list[str] = field(default_factory=list[str])

    def choose(self, among: int) -> int:
        value = self.choices[self.at % len(self.choices)] if self.choices else 0
        self.at += 1
        return value % among

    @property
    def location(self) -> str:
        return str(self.hud["location"]["id"])

    def here(self) -> list[str]:
        return sorted(npc for npc, place in self.npcs.items() if place == self.location)

    def seen(self, frames: list[Frame]) -> None:
        for frame in frames:
            if frame["t"] == "hud":
                self.hud = frame["data"]
            if frame["t"] == "options":
                self.options = frame["items"]

    def where(self) -> str:
        return " > ".join(self.trail[-12:])


def _problems(frames: list[Frame], picked: dict[str, Any] | None) -> list[str]:
    problems = [f"error {f['code']}: {f['message']}" for f in frames if f["t"] == "error"]
    problems += [
        f"refused {f['name']}: {f['summary']}" for f in frames if f["t"] == "action" and not f["ok"]
    ]
    if picked is not None and "offer" in picked:
        done = [f for f in frames if f["t"] == "action" and f["name"] == picked["offer"]["action"]]
        if not any(f["ok"] for f in done):
            problems.append(f"accepting {picked['label']!r} committed nothing: {line(frames)!r}")
    return problems


async def _open(walk: Walk) -> list[str]:
    npc = walk.here()[walk.choose(len(walk.here()))]
    walk.opened += 1
    walk.encounter = f"e{walk.opened}"
    walk.trail.append(f"open {npc}")
    frames = await walk.me.open(walk.encounter, npc)
    walk.seen(frames)
    return _problems(frames, None)


async def _close(walk: Walk) -> None:
    assert walk.encounter is not None
    await walk.me.send({"t": "encounter.close", "id": walk.encounter})
    walk.encounter = None
    walk.options = []


async def _tick(walk: Walk) -> list[str]:
    walk.trail.append("a day passes")
    await walk.me.send({"t": "world.tick", "days": 1})
    frames = await walk.me.until(lambda f: f["t"] in ("hud", "error"))
    walk.seen(frames)
    return _problems(frames, None)


async def _pick(walk: Walk) -> list[str]:
    assert walk.encounter is not None
    item = walk.options[walk.choose(len(walk.options))]
    walk.trail.append(repr(item["label"]))
    if item["id"] == "bye":
        await _close(walk)
        return []
    was = walk.location
    frames = await walk.me.pick(walk.encounter, item["id"])
    walk.seen(frames)
    problems = _problems(frames, item)
    if walk.location != was:
        # The player left: the server ends the encounter after the farewell.
        walk.trail.append(f"arrived at {walk.location}")
        walk.encounter = None
        walk.options = []
    return problems


BERTHS = ("travel:", "work:")


def _last_options(frames: list[Frame]) -> list[dict[str, Any]]:
    found = [f["items"] for f in frames if f["t"] == "options"]
    return found[-1] if found else []


def _berths(frames: list[Frame]) -> list[dict[str, Any]]:
    return [
        item
        for item in _last_options(frames)
        if item.get("offer", {}).get("action") == "book_passage"
    ]


async def _way_on(walk: Walk) -> list[str]:
    """Ask every passage seller where the player stands for a berth, and take the first."""
    if walk.encounter is not None:
        await _close(walk)
    for npc in walk.here():
        walk.opened += 1
        encounter = f"e{walk.opened}"
        await walk.me.open(encounter, npc)
        frames = await walk.me.say(encounter, "I need passage")
        berths = _berths(frames)
        if not berths:
            # A plan without offers in the NPC's step: the picked berth becomes the offer.
            asked = [item for item in _last_options(frames) if item["id"].startswith(BERTHS)]
            if asked:
                berths = _berths(await walk.me.pick(encounter, asked[0]["id"]))
        if not berths:
            await walk.me.send({"t": "encounter.close", "id": encounter})
            continue
        was = walk.location
        frames = await walk.me.pick(encounter, berths[0]["id"])
        walk.seen(frames)
        problems = _problems(frames, berths[0])
        if walk.location == was:
            problems.append(f"took {berths[0]['label']!r} and is still at {was}")
        return problems
    return [f"no way on from {walk.location} with {walk.hud['credits']:,} credits: {walk.hud}"]


async def _play(choices: list[int], plays: MockCapabilities, provider: str) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        async with (
            serving_voyage(Path(tmp), plays=plays, provider=provider) as stack,
            Player(stack.running.ws_url, PLAYER_ID) as me,
        ):
            welcome = await me.hello()
            npcs = {npc["id"]: npc["locationId"] for npc in welcome["npcs"]}
            walk = Walk(me, npcs, welcome["hud"], choices)
            for _ in range(STEPS):
                if walk.encounter is None:
                    problems = await (_tick(walk) if walk.choose(5) == 0 else _open(walk))
                else:
                    problems = await _pick(walk)
                if problems:
                    return [f"{walk.where()}: {p}" for p in problems]
            return [f"{walk.where()}: {p}" for p in await _way_on(walk)]


_WALKS = st.lists(st.integers(min_value=0, max_value=1_000), min_size=STEPS, max_size=STEPS * 2)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("plays", "provider"), [(FULL, "openai-compatible"), (LLAMA_CPP, "llama-cpp")], ids=str
)
@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    # Each example serves a world: shrinking would take minutes, and the trail says enough.
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(choices=_WALKS)
def test_every_offer_commits_and_the_player_always_has_a_way_on(
    plays: MockCapabilities, provider: str, choices: list[int]
) -> None:
    problems = asyncio.run(_play(choices, plays, provider))
    assert problems == [], "\n".join(problems)
