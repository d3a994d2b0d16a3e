"""A conversation longer than the model's window, played through the real NPC server, a
WebSocket client and the mock LLM refusing what does not fit, as llama-cpp-python's server
does: the oldest exchanges leave the encounter's view and the NPC keeps talking and trading.
"""

from __future__ import annotations

import asyncio
import itertools
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml
from voyage_e2e_support import Frame, Player, actions, line, offers, serving_voyage

from starharness.localmodel.server import DEFAULT_CONTEXT
from starharness.mockllm.capabilities import LLAMA_CPP, MockCapabilities
from starharness.runtime.llm import LLAMA_CPP as LLAMA_CPP_PROFILE
from starharness.voyage.content import PLAYER_ID, SMUGGLER

# Lines the offline brain answers with talk, offers and refusals alike.
_LINES = (
    "Hello there, what is this place?",
    "I'll buy 2 fuel cells",
    "Tell me about the station and who runs it, I have been travelling for a long time.",
    "What do you have for sale today?",
    "I'll buy 5 nebula spice",
    "Any rumours worth my time? I can listen for a while, the next ship is not until later.",
)
_TURNS = 30
_FIRST = "Name's Vex Arden, out of Ceres Deep. Remember it."


def _shipped_compaction_row(profile: str) -> dict[str, Any]:
    """The compaction row of a shipped profile (what `serve` and `play` run with)."""
    text = (resources.files("starharness.profiles") / profile).read_text()
    data = yaml.safe_load(text)
    for bundle in data["bundles"]:
        if isinstance(bundle, dict):
            for row in bundle.get("rows", ()):
                if row["id"] == "compaction":
                    return dict(row)
    raise AssertionError(f"{profile} has no compaction row")


def test_the_llama_cpp_window_is_what_serve_local_loads() -> None:
    assert LLAMA_CPP_PROFILE.context_window == DEFAULT_CONTEXT
    serve = _shipped_compaction_row("serve.yml")
    assert serve == _shipped_compaction_row("play.yml")
    assert serve["config"]["forget"] is True and serve["config"]["summarize"] is False


def _chat_requests(stack: Any) -> list[Any]:
    return [r for r in stack.mock.requests if r.path.endswith("/chat/completions")]


async def _play(me: Player) -> tuple[list[list[Frame]], int]:
    """Every turn's frames, and how many offers the player accepted (each commits once)."""
    await me.hello()
    await me.open("e1", SMUGGLER)
    turns: list[list[Frame]] = [await me.say("e1", _FIRST)]
    accepted = 0
    for text in itertools.islice(itertools.cycle(_LINES), _TURNS):
        # At a player's pace: the server allows a connection 4 lines a second.
        await asyncio.sleep(0.3)
        frames = await me.say("e1", text)
        turns.append(frames)
        pending = [o for o in offers(frames) if "fuel" in o["label"].lower()]
        if pending:
            await asyncio.sleep(0.3)
            picked = await me.pick("e1", pending[0]["id"])
            turns.append(picked)
            accepted += actions(picked).count(("player_buys", True))
    return turns, accepted


@pytest.mark.parametrize(
    ("declared", "server_window"),
    [
        # The window is known: the view is trimmed before a request could overflow.
        (6_144, 6_144),
        # The server's window is smaller than declared (another --n-ctx): the refused request
        # is retried once after forgetting.
        (16_384, 6_144),
    ],
    ids=["declared", "refused"],
)
async def test_a_conversation_longer_than_the_window_goes_on(
    tmp_path: Path, declared: int | None, server_window: int
) -> None:
    rows: list[dict[str, Any]] = [_shipped_compaction_row("serve.yml")]
    if declared is not None:
        rows.append({"id": "llm", "merge": {"context_window": declared}})
    plays = MockCapabilities(
        "llama-cpp-small",
        streams_open_tool_choice=LLAMA_CPP.streams_open_tool_choice,
        shows_tool_results=LLAMA_CPP.shows_tool_results,
        continues_calls=LLAMA_CPP.continues_calls,
        context_tokens=server_window,
    )
    async with (
        serving_voyage(tmp_path, plays=plays, provider="llama-cpp", rows=rows) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        turns, accepted = await _play(me)
        requests = _chat_requests(stack)
        with stack.world.snapshot() as reader:
            audit = reader.audit_log()
    errors = [f for frames in turns for f in frames if f["t"] == "error"]
    assert errors == []
    # Every turn was answered in words, the last ones too.
    assert all(line(frames) for frames in turns)
    refused = [r for r in requests if r.error is not None]
    answered = [r for r in requests if r.error is None]
    assert len(answered) >= 2 * _TURNS
    if declared == server_window:
        assert refused == []
    else:
        assert refused, "the conversation never reached the server's window"
        assert all("maximum context length" in (r.error or "") for r in refused)
    # The oldest exchanges left the view; the request stayed inside the server's window.
    assert _FIRST in str(answered[2].body)
    assert _FIRST not in str(answered[-1].body)
    # The world holds exactly what the player accepted, no more.
    bought = [a for a in audit if a.action == "player_buys" and a.ok]
    assert accepted >= 3
    assert len(bought) == accepted


async def test_a_window_smaller_than_the_npcs_prompt_says_so_and_nothing_changes(
    tmp_path: Path,
) -> None:
    # A server loaded with a window its NPC's system message and tools alone overflow.
    plays = MockCapabilities(
        "llama-cpp-tiny",
        streams_open_tool_choice=LLAMA_CPP.streams_open_tool_choice,
        shows_tool_results=LLAMA_CPP.shows_tool_results,
        context_tokens=1_024,
    )
    rows = [_shipped_compaction_row("serve.yml")]
    async with (
        serving_voyage(tmp_path, plays=plays, provider="llama-cpp", rows=rows) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await me.hello()
        opened = await me.open("e1", SMUGGLER)
        await asyncio.sleep(0.3)
        said = await me.say("e1", "I'll buy 2 fuel cells")
        # The connection lives on: another frame is still answered.
        again = await me.hello()
        with stack.world.snapshot() as reader:
            audit = reader.audit_log()
    errors = [f for f in opened + said if f["t"] == "error"]
    assert errors and all(f["code"] == "llm_unavailable" for f in errors)
    assert all("no longer fits the model's context" in f["message"] for f in errors)
    assert again["t"] == "welcome"
    assert audit == []
