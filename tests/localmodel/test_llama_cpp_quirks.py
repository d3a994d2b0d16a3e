"""The llama-cpp profile's quirks: forcing the allowed tool, the unstreamed fallback, the log."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from starharness.eval import EvalSettings, Target, load_scenarios, run_eval
from starharness.mockllm import MockLlmServer
from starharness.mockllm.capabilities import LLAMA_CPP as PLAYS_LLAMA_CPP
from starharness.npc.encounter.decision import OUTCOME_PREFIX
from starharness.npc.lore import LORE_HEADING
from starharness.runtime.llm import (
    DEEPSEEK,
    LLAMA_CPP,
    OPENAI_COMPATIBLE,
    AssistantMessage,
    Finish,
    LlmRequest,
    LlmService,
    NamedToolChoice,
    OpenAICompatibleProvider,
    ServerError,
    StreamChunk,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    ToolMessage,
    ToolSchema,
    Usage,
    UserMessage,
)
from starharness.runtime.llm.quirks import plan_request
from starharness.runtime.llm.wire import to_wire_messages
from starharness.voyage import GAME

SESSION = "quirk-session"
SPEAK = ToolSchema("speak", "Say a line.", {"type": "object", "properties": {}})
ACT = ToolSchema("act", "Do something.", {"type": "object", "properties": {}})
TOOLS = (SPEAK, ACT)


def _request(
    choice: ToolChoice = "auto",
    *,
    forcible: str | None = "speak",
    tools: Sequence[ToolSchema] = TOOLS,
) -> LlmRequest:
    return LlmRequest(
        model="local",
        system="You are a test.",
        messages=[UserMessage("hello")],
        session_id=SESSION,
        tools=tools,
        tool_choice=choice,
        forcible_tool=forcible,
    )


# -- the plan, decided from the profile alone ------------------------------------------------


@pytest.mark.parametrize("choice", ["auto", "required"])
def test_an_open_choice_forces_the_tool_the_caller_allows(choice: ToolChoice) -> None:
    plan = plan_request(LLAMA_CPP, _request(choice))
    assert plan.stream is True
    assert plan.request.tool_choice == NamedToolChoice("speak")
    assert plan.log_data() == {
        "choice": "forced-tool",
        "tool": "speak",
        "reason": f'llama-cpp cannot stream tool_choice "{choice}"',
    }


def test_without_an_allowed_tool_the_request_goes_unstreamed() -> None:
    plan = plan_request(LLAMA_CPP, _request(forcible=None))
    assert plan.stream is False
    assert plan.request.tool_choice == "auto"
    data = plan.log_data()
    assert data is not None and data["choice"] == "unstreamed"
    assert "allows no tool" in data["reason"]


def test_an_allowed_tool_that_is_not_offered_is_not_forced() -> None:
    plan = plan_request(LLAMA_CPP, _request(forcible="speak", tools=(ACT,)))
    assert plan.stream is False
    data = plan.log_data()
    assert data is not None and "'speak'" in data["reason"]


@pytest.mark.parametrize(
    ("profile", "request_"),
    [
        (OPENAI_COMPATIBLE, _request()),
        (DEEPSEEK, _request(forcible=None)),
        (LLAMA_CPP, _request("none")),
        (LLAMA_CPP, _request(NamedToolChoice("act"))),
        (LLAMA_CPP, _request(tools=())),
    ],
)
def test_requests_the_server_can_take_go_out_as_asked(profile: Any, request_: LlmRequest) -> None:
    plan = plan_request(profile, request_)
    assert plan.stream is True
    assert plan.request is request_
    assert plan.log_data() is None


def test_assistant_tool_calls_carry_empty_text_not_null_for_llama_cpp() -> None:
    history = [
        UserMessage("hi"),
        AssistantMessage(tool_calls=(ToolCall("c1", "speak", '{"line":"Hi."}'),)),
        ToolMessage("c1", "heard"),
    ]
    assert to_wire_messages("", history, profile=LLAMA_CPP)[1]["content"] == ""
    assert to_wire_messages("", history, profile=DEEPSEEK)[1]["content"] is None


# -- the provider over real HTTP against the mock LLM ------------------------------------------


@pytest_asyncio.fixture
async def mock() -> AsyncIterator[MockLlmServer]:
    async with MockLlmServer() as server:
        yield server


async def _collect(mock: MockLlmServer, request: LlmRequest) -> list[StreamChunk]:
    provider = OpenAICompatibleProvider(LLAMA_CPP, base_url=mock.base_url, model="local")
    try:
        return [chunk async for chunk in provider.stream(request)]
    finally:
        await provider.aclose()


async def test_the_forced_request_streams_with_the_named_tool(mock: MockLlmServer) -> None:
    mock.script(SESSION, [{"behaviour": "tool_call_success", "calls": [{"name": "speak"}]}])
    chunks = await _collect(mock, _request())
    body = mock.requests_for(SESSION)[0].body
    assert body["stream"] is True
    assert body["tool_choice"] == {"type": "function", "function": {"name": "speak"}}
    assert any(isinstance(c, ToolCallDelta) and c.name == "speak" for c in chunks)
    assert chunks[-1] == Finish("tool-calls")


async def test_the_unstreamed_answer_arrives_as_the_chunks_a_stream_carries(
    mock: MockLlmServer,
) -> None:
    arguments = {"line": "Evening.", "mood": "wary"}
    mock.script(
        SESSION,
        [{"behaviour": "tool_call_success", "calls": [{"name": "act", "arguments": arguments}]}],
    )
    chunks = await _collect(mock, _request(forcible=None))
    body = mock.requests_for(SESSION)[0].body
    assert body["stream"] is False
    assert "stream_options" not in body
    assert body["tool_choice"] == "auto"
    calls = [c for c in chunks if isinstance(c, ToolCallDelta)]
    assert [(c.index, c.name) for c in calls] == [(0, "act")]
    assert json.loads(calls[0].arguments_delta) == arguments
    assert isinstance(chunks[-2], Usage) and chunks[-2].output > 0
    assert chunks[-1] == Finish("tool-calls")


async def test_an_unstreamed_text_answer_is_text_then_usage_then_stop(mock: MockLlmServer) -> None:
    mock.script(SESSION, [{"behaviour": "success", "text": "Plain words."}])
    chunks = await _collect(mock, _request(forcible=None))
    assert "".join(c.text for c in chunks if isinstance(c, TextDelta)) == "Plain words."
    assert isinstance(chunks[-2], Usage)
    assert chunks[-1] == Finish("stop")


async def test_an_unstreamed_failure_is_the_same_error_as_a_streamed_one(
    mock: MockLlmServer,
) -> None:
    mock.script(SESSION, [{"behaviour": "server_error"}])
    with pytest.raises(ServerError):
        await _collect(mock, _request(forcible=None))


async def test_the_service_reports_the_quirk_only_for_providers_that_can_say() -> None:
    class Opaque:
        name = "opaque"
        default_model = "m"

        def stream(self, request: LlmRequest) -> AsyncIterator[StreamChunk]:
            raise NotImplementedError

        async def aclose(self) -> None:
            return None

    service = LlmService()
    service.register(OpenAICompatibleProvider(LLAMA_CPP, base_url="http://127.0.0.1:9/v1"))
    service.register(Opaque())
    quirk = service.quirk(_request(), provider="llama-cpp")
    assert quirk is not None and quirk["choice"] == "forced-tool"
    assert service.quirk(_request(), provider="opaque") is None


# -- through the loop: an NPC on the llama-cpp profile ---------------------------------------


async def test_an_npc_on_llama_cpp_decides_then_speaks_every_request_named(
    tmp_path: Path,
) -> None:
    # The mock plays llama-cpp-python: an open choice streamed would be an HTTP 500 and tool
    # results are hidden. The profile declares both, so the NPC runs decide-act-speak.
    scenarios = load_scenarios(_greeting_file(tmp_path))
    async with MockLlmServer(responder=GAME.offline_responder, plays=PLAYS_LLAMA_CPP) as brain:
        settings = EvalSettings(Target("llama-cpp", "local", brain.base_url), turn_timeout_s=20)
        report = await run_eval(settings, scenarios, tmp_path)
        bodies = [r.body for r in brain.requests if isinstance(r.body, dict)]
    turns = report.turns()
    # Every request names its tool, so no quirk had to change one.
    assert turns and all(turn.quirks == [] for turn in turns)
    assert bodies and all(body["stream"] is True for body in bodies)
    # The server may first warm NPC prefixes (the system message and the scene's opening, one
    # token), then the turns' own requests follow.
    warming = [body for body in bodies if body.get("max_tokens") == 1]
    assert all(len(body["messages"]) <= 2 for body in warming)
    turn_bodies = [body for body in bodies if body.get("max_tokens") != 1]
    forced = [body["tool_choice"]["function"]["name"] for body in turn_bodies]
    # The greeting only speaks (nothing is decided on walking up); every say decides first.
    assert forced == ["npc_speak"] + ["decide", "npc_speak"] * (len(turns) - 1)
    assert all(body["tool_choice"]["function"]["name"] == "decide" for body in warming)
    # A decision's result is repeated for the model (the server hides tool results), and the
    # decision leaves the view: a decision to only talk makes the speech request the
    # decision's own prompt (the player's words the last thing said), an acting one adds only
    # the repeated result, which names the action. A small model copies calls it sees.
    outcomes = {"none": 0, "action": 0}
    for decide, speak in itertools.pairwise(turn_bodies):
        if decide["tool_choice"]["function"]["name"] != "decide":
            continue
        assert speak["tool_choice"]["function"]["name"] == "npc_speak"
        added = speak["messages"][len(decide["messages"]) :]
        assert speak["messages"][: len(decide["messages"])] == decide["messages"]
        begun = _begun_line(speak)
        if begun is not None:
            added = added[:-1]
        assert all(m["role"] == "user" for m in added)
        if all(m["content"].startswith(LORE_HEADING) for m in added):
            # Only talks: at most the line's lore, given once the NPC decided so.
            outcomes["none"] += 1
            continue
        outcomes["action"] += 1
        assert len(added) == 1
        # From the NPC's side (the game's pitch), not the player's label.
        assert added[0]["content"].startswith(OUTCOME_PREFIX + 'player_buys: offered "I sell you ')
        # The server continues the line from the game's words for the offer, which the
        # player reads while the model reads the result.
        assert begun == '{"line":"I can let you have 2 fuel cells for 900 credits.'
    assert outcomes == {"none": 2, "action": 1}
    # No decision is ever in view, and every turn's prompt continues the last one's (the
    # prompt the server kept), whatever the decisions before it were.
    for body in turn_bodies:
        for message in body["messages"]:
            assert all(
                call["function"]["name"] != "decide" for call in message.get("tool_calls") or ()
            )
    for earlier, later in itertools.pairwise(turn_bodies):
        # A line's begun call is the start of the call the answer holds (the mock continues
        # it as `models serve-local` does, tests/localmodel/test_realmodel_chat_handler.py).
        kept = earlier["messages"][:-1] if _begun_line(earlier) else earlier["messages"]
        assert later["messages"][: len(kept)] == kept
        if earlier["tool_choice"]["function"]["name"] == "npc_speak":
            # The server kept the speech it generated: it comes next.
            answer = later["messages"][len(kept)]
            assert [call["function"]["name"] for call in answer["tool_calls"]] == ["npc_speak"]
            begun = _begun_line(earlier)
            if begun is not None:
                # The line the NPC said began with the offer's words.
                assert answer["tool_calls"][0]["function"]["arguments"].startswith(begun)
    assert all(turn.verdicts["completed"].passed for turn in turns)
    assert all(turn.verdicts["spoke_via_action"].passed for turn in turns)


def _begun_line(body: dict[str, Any]) -> str | None:
    """The arguments of the speech call a request begins for the server to continue, if any."""
    last = body["messages"][-1]
    if last["role"] != "assistant" or not last.get("tool_calls"):
        return None
    (call,) = last["tool_calls"]
    assert call["function"]["name"] == body["tool_choice"]["function"]["name"]
    return call["function"]["arguments"]


def _greeting_file(tmp_path: Path) -> Path:
    path = tmp_path / "greeting.yml"
    path.write_text(
        "scenarios:\n"
        "  - name: greeting\n"
        "    player: player-1\n"
        "    steps:\n"
        "      - open: npc-karsk\n"
        "      - say: Evening. What do you trade?\n"
        "      - say: I'd like to buy 2 fuel cells at the going price.\n"
        "      - say: Evening. What do you trade?\n"
    )
    return path


async def test_after_an_accepted_offer_the_npc_s_line_begins_with_the_deal_done(
    tmp_path: Path,
) -> None:
    # The reaction skips the decision (the world answered); its line begins with the game's
    # words for the deal done, from the NPC's side (a small model otherwise spoke as the buyer).
    path = tmp_path / "accepted.yml"
    path.write_text(
        "scenarios:\n"
        "  - name: accepted\n"
        "    player: player-1\n"
        "    steps:\n"
        "      - open: npc-karsk\n"
        "      - say: I'd like to buy 2 fuel cells at the going price.\n"
        "      - accept: true\n"
    )
    async with MockLlmServer(responder=GAME.offline_responder, plays=PLAYS_LLAMA_CPP) as brain:
        settings = EvalSettings(Target("llama-cpp", "local", brain.base_url), turn_timeout_s=20)
        report = await run_eval(settings, load_scenarios(path), tmp_path)
        bodies = [r.body for r in brain.requests if isinstance(r.body, dict)]
    turns = report.turns()
    assert [a["name"] for a in turns[-1].actions] == ["player_buys"]
    turn_bodies = [body for body in bodies if body.get("max_tokens") != 1]
    begun = [_begun_line(body) for body in turn_bodies]
    assert begun[-2:] == [
        '{"line":"I can let you have 2 fuel cells for 900 credits.',
        '{"line":"There you go: 2 fuel cells.',
    ]
    assert turns[-1].lines[0].startswith("There you go: 2 fuel cells.")
