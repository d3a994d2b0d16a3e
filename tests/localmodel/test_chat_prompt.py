"""The prompt `serve-local`'s chat handler renders: nothing escaped, a prefix the cache keeps."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from starharness.localmodel.chat_prompt import (
    CHAT_FORMAT_NAME,
    ChatPromptError,
    PromptPart,
    forced_name,
    functions_block,
    generation_parts,
    json_response_schema,
    next_user_parts,
    read_messages,
    read_tools,
    render,
    render_parts,
)
from starharness.localmodel.server import CHAT_FORMAT

DECIDE: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "decide",
        "description": "Decide what you do.",
        "parameters": {"type": "object", "properties": {"action": {"type": "string"}}},
    },
}
SPEAK: dict[str, Any] = {
    "type": "function",
    "function": {"name": "npc_speak", "parameters": {"type": "object", "properties": {}}},
}
TOOLS = read_tools([DECIDE, SPEAK])

_text = st.lists(
    st.sampled_from(
        [*"abc xyz", '"', "'", "<", ">", "&", "\n", "é", "{", "}", "<|im_start|>", "<|im_end|>"]
    ),
    max_size=30,
).map("".join)
_call = st.builds(
    lambda name, arguments: _call_of(name, arguments),
    st.sampled_from(["decide", "npc_speak"]),
    _text,
)
_message = st.one_of(
    st.builds(lambda text: {"role": "user", "content": text}, _text),
    st.builds(lambda text: {"role": "tool", "content": text, "tool_call_id": "c1"}, _text),
    st.builds(
        lambda text, calls: {"role": "assistant", "content": text, "tool_calls": calls},
        _text,
        st.lists(_call, max_size=2),
    ),
)
_conversation = st.builds(
    lambda system, rest: [{"role": "system", "content": system}, *rest],
    _text,
    st.lists(_message, max_size=8),
)


@given(_conversation)
def test_each_message_only_appends_to_the_prompt(conversation: list[dict[str, Any]]) -> None:
    """The server's cache reuses a prompt's longest common prefix: a turn must never rewrite
    what an earlier request already rendered."""
    for size in range(1, len(conversation)):
        shorter = render(read_messages(conversation[:size]), TOOLS)
        longer = render(read_messages(conversation[: size + 1]), TOOLS)
        assert longer.startswith(shorter)


@given(_conversation)
def test_only_the_template_s_markers_are_read_as_control_tokens(
    conversation: list[dict[str, Any]],
) -> None:
    """A message that spells `<|im_start|>system` stays text: read as the model's control token
    it would open a message the conversation never had."""
    messages = read_messages(conversation)
    parts = render_parts(messages, TOOLS)
    assert "".join(part.text for part in parts) == render(messages, TOOLS)
    markers = [part.text for part in parts if part.marker]
    shown = [message for message in messages if message.role != "tool"]
    assert markers == ["<|im_start|>", "<|im_end|>"] * len(shown)
    for size in range(1, len(conversation)):
        shorter = render_parts(read_messages(conversation[:size]), TOOLS)
        longer = render_parts(read_messages(conversation[: size + 1]), TOOLS)
        assert longer[: len(shorter)] == shorter


def _flat(parts: tuple[PromptPart, ...] | list[PromptPart]) -> list[tuple[str, bool]]:
    """A prompt as the tokenizer meets it: text a character at a time, a marker whole."""
    out: list[tuple[str, bool]] = []
    for part in parts:
        out += [(part.text, True)] if part.marker else [(char, False) for char in part.text]
    return out


@given(_conversation, st.sampled_from(["decide", "npc_speak", None]), _text, _text)
def test_what_the_server_evaluates_after_an_answer_begins_the_next_request(
    conversation: list[dict[str, Any]], called: str | None, answer: str, said: str
) -> None:
    """The model server evaluates `next_user_parts` after an answer while the player reads: the
    next request (the answer in the history, then the player's line) must begin with the
    request before, the answer as the model generated it, and those parts."""
    assume(called is not None or answer)  # an empty text answer is rendered without `message:`
    request = [*conversation, {"role": "user", "content": "Hello."}]
    if called is None:
        reply: dict[str, Any] = {"role": "assistant", "content": answer}
        body = f"message:\n{answer}"
    else:
        reply = {"role": "assistant", "content": None, "tool_calls": [_call_of(called, answer)]}
        body = f"functions.{called}:\n{answer}"
    before = [*render_parts(read_messages(request), TOOLS), *generation_parts()]
    held = [*before, PromptPart(body), *next_user_parts()]
    after = render_parts(read_messages([*request, reply, {"role": "user", "content": said}]), TOOLS)
    assert _flat(after)[: len(_flat(held))] == _flat(held)


@given(_text)
def test_nothing_is_html_escaped(text: str) -> None:
    prompt = render(read_messages([{"role": "user", "content": text}]), TOOLS)
    assert f"<|im_start|>user\n{text}<|im_end|>" in prompt


def test_tool_calls_in_the_history_are_rendered_as_the_model_wrote_them() -> None:
    arguments = '{"line":"It\'s 450 a cell, "friend"."}'
    history = [
        {"role": "system", "content": "You are Karsk."},
        {"role": "assistant", "content": None, "tool_calls": [_call_of("npc_speak", arguments)]},
        {"role": "tool", "content": "The player heard you.", "tool_call_id": "c1"},
    ]
    prompt = render(read_messages(history), TOOLS)
    assert f"<|im_start|>assistant\nfunctions.npc_speak:\n{arguments}<|im_end|>" in prompt
    assert "The player heard you." not in prompt  # no tool role, as the profile declares


def test_two_personas_with_the_same_actions_share_the_whole_function_list() -> None:
    karsk = render(read_messages([{"role": "system", "content": "You are Karsk."}]), TOOLS)
    brandt = render(read_messages([{"role": "system", "content": "You are Brandt."}]), TOOLS)
    shared = f"<|im_start|>system\n{functions_block(TOOLS)}\n\nYou are "
    assert karsk.startswith(shared) and brandt.startswith(shared)
    assert "functions.decide: Decide what you do.\n" in shared


def test_without_tools_the_prompt_is_plain_chatml() -> None:
    prompt = render(read_messages([{"role": "user", "content": "Say hello."}]), ())
    assert prompt == "<|im_start|>user\nSay hello.<|im_end|>\n"


def test_content_parts_are_joined() -> None:
    parts = [{"type": "text", "text": "Two "}, {"type": "text", "text": "parts."}]
    (message,) = read_messages([{"role": "user", "content": parts}])
    assert message.content == "Two parts."


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([{"content": "no role"}], "messages[0] is not a chat message"),
        (
            [{"role": "user"}, {"role": "assistant", "tool_calls": [{"function": {}}]}],
            "messages[1] is not a chat message",
        ),
    ],
)
def test_a_malformed_message_is_named(raw: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(ChatPromptError, match=message.replace("[", r"\[").replace("]", r"\]")):
        read_messages(raw)


def test_a_tool_that_is_not_a_function_is_named() -> None:
    with pytest.raises(ChatPromptError, match=r"tools\[1\] is not a function tool"):
        read_tools([DECIDE, {"type": "function"}])


@pytest.mark.parametrize(
    ("choice", "name"),
    [
        ({"type": "function", "function": {"name": "decide"}}, "decide"),
        ("auto", None),
        ("none", None),
        ("required", None),
        (None, None),
    ],
)
def test_the_forced_function_is_read_from_tool_choice(choice: object, name: str | None) -> None:
    assert forced_name(choice) == name


def test_a_forced_choice_without_a_name_is_an_error() -> None:
    with pytest.raises(ChatPromptError, match="tool_choice names no function"):
        forced_name({"type": "function", "function": {}})


def test_serve_local_uses_this_handler_by_default() -> None:
    from starharness.cli.models import serve_local

    assert CHAT_FORMAT == CHAT_FORMAT_NAME
    defaults = serve_local.__defaults__ or ()
    assert CHAT_FORMAT_NAME in defaults


def _call_of(name: str, arguments: str) -> dict[str, Any]:
    return {"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}


@pytest.mark.parametrize(
    ("response_format", "schema"),
    [
        (None, None),
        ({"type": "text"}, None),
        ({"type": "json_object"}, {}),
        (
            {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "integer"}}},
            {"type": "integer"},
        ),
    ],
)
def test_the_answer_s_json_schema_is_read_from_response_format(
    response_format: object, schema: object
) -> None:
    assert json_response_schema(response_format) == schema


def test_a_response_format_that_is_not_one_is_named() -> None:
    with pytest.raises(ChatPromptError, match="response_format is not understood"):
        json_response_schema("json")
