"""A forced call's fixed opening goes into the prompt and the grammar keeps only the rest: the
sample game's speech and decision calls, through llama.cpp's converter and parser and through
the real server with SmolLM2; shapes the opening does not know are generated whole."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from realmodel_support import ServedModel, require_real_model

from starharness.localmodel.call_opening import continues_string, split_opening
from starharness.localmodel.chat_prompt import (
    CALL_PREFIX,
    ChatMessage,
    ToolCallText,
    continued_call,
    generation_prompt,
    read_messages,
    read_tools,
    render,
)
from starharness.npc.encounter import GameKit
from starharness.voyage import GAME


def _gbnf(schema: dict[str, Any]) -> str:
    require_real_model()
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    return json_schema_to_gbnf(json.dumps(schema))


def _parses(grammar: str) -> None:
    from llama_cpp.llama_grammar import LlamaGrammar

    LlamaGrammar.from_string(grammar, verbose=False)


def test_the_speech_call_opens_with_its_first_key_in_the_prompt() -> None:
    kit = GameKit.of(GAME)
    opening = split_opening(_gbnf(dict(kit.speech_tool.schema.parameters)))
    assert opening is not None
    assert opening.text == '{"line":"'
    root = next(line for line in opening.grammar.splitlines() if line.startswith("root ::= "))
    assert root.startswith("root ::= [")  # the rest begins at the line's first character
    _parses(opening.grammar)


def test_every_decision_opens_with_the_action_and_its_name_key_in_the_prompt() -> None:
    kit = GameKit.of(GAME)
    for each in [kit.default, *kit.archetypes.values()]:
        opening = split_opening(_gbnf(dict(each.decision_tool.schema.parameters)))
        assert opening is not None
        assert opening.text == '{"action":{"name":"'
        _parses(opening.grammar)


@pytest.mark.parametrize(
    "schema",
    [
        # the first property is optional: an empty object is as valid as one with it
        {"type": "object", "properties": {"line": {"type": "string"}}},
        {"type": "array", "items": {"type": "string"}},
        # the first value is no string: no opening quote to end on
        {"type": "object", "properties": {"qty": {"type": "integer"}}, "required": ["qty"]},
        {"type": "string"},
    ],
)
def test_shapes_without_a_fixed_opening_are_generated_whole(schema: dict[str, Any]) -> None:
    assert split_opening(_gbnf(schema)) is None


def test_text_not_in_the_converters_shape_is_left_alone() -> None:
    assert split_opening("") is None
    assert split_opening('root ::= "{" space\n  "}"') is None  # a rule over two lines
    assert split_opening('root ::= "{" space a-kv "}" space') is None  # a-kv undefined


@given(
    st.lists(
        st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True), min_size=1, max_size=4, unique=True
    )
)
def test_any_object_with_required_string_fields_opens_with_its_first(keys: list[str]) -> None:
    schema = {
        "type": "object",
        "properties": {key: {"type": "string"} for key in keys},
        "required": keys,
    }
    opening = split_opening(_gbnf(schema))
    assert opening is not None
    assert opening.text == f'{{"{keys[0]}":"'
    _parses(opening.grammar)


@pytest.mark.realmodel
def test_a_forced_decision_through_the_server_is_whole_json_of_one_action(
    real_model: ServedModel,
) -> None:
    kit = GameKit.of(GAME)
    decision = kit.default.decision_tool.schema
    tool = {
        "type": "function",
        "function": {"name": decision.name, "parameters": dict(decision.parameters)},
    }
    body = {
        "messages": [
            {"role": "system", "content": "You run a bar."},
            {"role": "user", "content": "Sell me two fuel cells."},
        ],
        "max_tokens": 80,
        "temperature": 0,
        "tools": [tool],
        "tool_choice": {"type": "function", "function": {"name": decision.name}},
    }
    answer = httpx.post(f"{real_model.base_url}/chat/completions", json=body, timeout=300)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    (call,) = data["choices"][0]["message"]["tool_calls"]
    arguments = call["function"]["arguments"]
    assert arguments.startswith('{"action":{"name":"')
    names = {variant["properties"]["name"]["enum"][0] for variant in _variants(decision)}
    assert json.loads(arguments)["action"]["name"] in names
    # The opening was read with the prompt, not generated a token at a time: the prompt the
    # server counted is the rendered conversation with the opening at its end.
    prompt = render(read_messages(body["messages"]), read_tools(body["tools"]))
    prompt += f"{generation_prompt()}{CALL_PREFIX}{decision.name}:\n"
    without = _count(real_model, prompt)
    with_opening = _count(real_model, prompt + '{"action":{"name":"')
    assert with_opening > without
    assert data["usage"]["prompt_tokens"] in (with_opening, with_opening + 1), (  # + a BOS
        data["usage"],
        without,
        with_opening,
    )


def _count(model: ServedModel, text: str) -> int:
    url = f"{model.base_url.removesuffix('/v1')}/extras/tokenize"
    counted = httpx.post(url, json={"input": text}, timeout=60)
    assert counted.status_code == 200, counted.text
    return len(counted.json()["tokens"])


def _variants(decision: Any) -> list[dict[str, Any]]:
    return dict(decision.parameters)["properties"]["action"]["anyOf"]


# -- a call begun in the request -------------------------------------------------------------


@given(st.text(max_size=40))
def test_an_opening_and_any_string_text_continue_the_string(words: str) -> None:
    begun = '{"line":' + json.dumps(words, ensure_ascii=False)[:-1]
    assert continues_string('{"line":"', begun)
    # The string closed, something other than the opening, a cut escape: not a continuation.
    assert not continues_string('{"line":"', begun + '"')
    assert not continues_string('{"line":"', '{"text":"' + begun[9:])
    assert not continues_string('{"line":"', begun + "\\")


def test_an_opening_that_does_not_end_inside_a_string_continues_nothing() -> None:
    assert not continues_string('{"n":', '{"n":1')
    assert not continues_string("", "anything")


def test_a_conversation_that_ends_with_the_forced_call_begun_is_continued() -> None:
    history = (ChatMessage("system", "S"), ChatMessage("user", "Hi"))
    begun = ChatMessage("assistant", "", (ToolCallText("npc_speak", '{"line":"Two loaves'),))
    assert continued_call((*history, begun), "npc_speak") == (history, '{"line":"Two loaves')
    # Another tool, words beside the call, nothing forced: the conversation as it is.
    other = ChatMessage("assistant", "", (ToolCallText("decide", '{"action":'),))
    worded = ChatMessage("assistant", "Hm.", begun.calls)
    for messages, forced in [
        ((*history, other), "npc_speak"),
        ((*history, worded), "npc_speak"),
        ((*history, begun), None),
        (history, "npc_speak"),
    ]:
        assert continued_call(messages, forced) == (messages, None)
