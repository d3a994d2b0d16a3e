"""Fragmenting tool-call arguments: any split reassembles to the original, also over HTTP."""

import json
from typing import Any

import httpx
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from mockllm_client import stream_chat

from starharness.mockllm import MockLlmServer, ScriptedCall, ToolCalls, split_at, split_every

# Any code point, lone surrogates included, with the troublesome ones drawn often.
_TRICKY = st.sampled_from(['"', "\\", "\n", "é", "你", "😀", "\ud83d", "\ude00", "\x00"])
_SURROGATE = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, categories=["Cs"])
# Lists of characters rather than st.text, which would drop the surrogates.
_ANY_TEXT = st.lists(_TRICKY | _SURROGATE | st.characters(codec=None), max_size=30).map("".join)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _ANY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_ANY_TEXT, inner, max_size=4),
    max_leaves=12,
)


@st.composite
def _arguments(draw: st.DrawFn) -> str:
    # Mostly the shape tools get (an object with a text field), sometimes any JSON value.
    value: Any = draw(st.fixed_dictionaries({"line": _ANY_TEXT, "rest": _JSON}) | _JSON)
    return json.dumps(value, ensure_ascii=draw(st.booleans()))


@given(st.text(), st.integers(1, 40))
def test_split_every_reassembles(text: str, size: int) -> None:
    pieces = split_every(text, size)

    assert "".join(pieces) == text
    assert all(0 < len(piece) <= size for piece in pieces)


@given(st.text(), st.lists(st.integers(-5, 80)))
def test_split_at_reassembles(text: str, offsets: list[int]) -> None:
    pieces = split_at(text, offsets)

    assert "".join(pieces) == text
    assert all(pieces)
    assert len(pieces) == len({o for o in offsets if 0 < o < len(text)}) + (1 if text else 0)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
async def test_streamed_fragments_concatenate_to_the_original(
    mock_llm: MockLlmServer, http: httpx.AsyncClient, data: st.DataObject
) -> None:
    arguments = data.draw(_arguments())
    # JSON joins an escaped surrogate pair into one character, so a raw high+low pair in a
    # Python string cannot cross any JSON wire unchanged; everything else must.
    assume(json.loads(json.dumps(arguments)) == arguments)
    if data.draw(st.booleans()):
        step = ToolCalls(
            calls=[ScriptedCall(name="speak", arguments=arguments)],
            fragment_size=data.draw(st.integers(1, 12)),
        )
    else:
        offsets = data.draw(st.lists(st.integers(0, max(len(arguments), 1)), max_size=12))
        step = ToolCalls(
            calls=[ScriptedCall(name="speak", arguments=arguments)], fragment_splits=tuple(offsets)
        )
    session = f"prop-{len(mock_llm.requests)}"
    mock_llm.script(session, [step])

    answer = await stream_chat(http, mock_llm.base_url, session=session)

    assert answer.tool_calls()[0]["arguments"] == arguments


async def test_lone_surrogates_and_escape_pairs_survive_any_cut(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    raw_surrogate = '{"a": "\ud800 and 😀"}'
    escaped_pair = json.dumps({"a": "😀"})  # '{"a": "\\ud83d\\ude00"}'
    for session, arguments in (("raw", raw_surrogate), ("escaped", escaped_pair)):
        mock_llm.script(
            session,
            [ToolCalls(calls=[ScriptedCall(name="speak", arguments=arguments)], fragment_size=1)],
        )

        answer = await stream_chat(http, mock_llm.base_url, session=session)

        assert answer.tool_calls()[0]["arguments"] == arguments
