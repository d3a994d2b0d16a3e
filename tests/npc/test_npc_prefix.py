"""Static first, dynamic last: over a 10-turn encounter the provider's prefix cache stays warm."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from npc_support import serving, spoken
from tinygame import GAME
from tinygame.brain import respond

from starharness.npc import LimitsSettings, ServerSettings

TURNS = 10


def _prompt(body: dict[str, Any]) -> str:
    # What a prefix cache sees: the tools, then the messages, in the order they were sent.
    tools = json.dumps(body.get("tools", []), separators=(",", ":"), sort_keys=True)
    messages = json.dumps(body["messages"], separators=(",", ":"), sort_keys=True)
    return tools + messages


def _common_prefix(a: str, b: str) -> int:
    size = min(len(a), len(b))
    low, high = 0, size
    while low < high:  # binary search on prefix equality: O(n log n) with C-speed compares
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


async def test_static_part_is_stable_and_requests_extend_each_other(tmp_path: Path) -> None:
    settings = ServerSettings(port=0, limits=LimitsSettings(say_burst=TURNS))
    async with (
        serving(GAME, tmp_path, settings, responder=respond) as stack,
        stack.client() as client,
    ):
        await client.open("e1", "n-baker", "p1")
        turn_of_request: list[int] = []
        for turn in range(1, TURNS + 1):
            before = len(stack.mock.requests)
            text = "buy 1" if turn in (4, 8) else f"Tell me something, turn {turn}."
            frames = await client.say("e1", text)
            assert spoken(frames)
            turn_of_request += [turn] * (len(stack.mock.requests) - before)
            stack.world.tick(1)  # the world changes between turns: the scene does too
        assert stack.world.holdings("p1") == (14, 2)

    bodies = [record.body for record in stack.mock.requests]
    assert len({record.conversation for record in stack.mock.requests}) == 1
    static = {json.dumps([body["tools"], body["messages"][0]], sort_keys=True) for body in bodies}
    assert len(static) == 1, "the system prompt or the tools changed between requests"
    assert bodies[0]["messages"][0]["role"] == "system"
    assert "Scene:" not in bodies[0]["messages"][0]["content"]

    prompts = [_prompt(body) for body in bodies]
    shares: list[float] = []
    for index in range(len(prompts) - 1):
        if turn_of_request[index] >= 2:
            shares.append(_common_prefix(prompts[index], prompts[index + 1]) / len(prompts[index]))
    print(
        f"\nprefix stability over {TURNS} turns, {len(prompts)} requests: "
        f"lowest share of a request that is a prefix of the next = {min(shares):.1%}, "
        f"mean {sum(shares) / len(shares):.1%}; static part {len(static.pop())} characters, "
        f"last request {len(prompts[-1])} characters"
    )
    assert min(shares) >= 0.9
