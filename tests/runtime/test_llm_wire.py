"""Wire encoding: messages, tools and request bodies in chat-completions JSON."""

from __future__ import annotations

import gc
import json
from dataclasses import replace
from types import MappingProxyType

from hypothesis import given
from hypothesis import strategies as st

from starharness.runtime.llm import (
    DEEPSEEK,
    LLAMA_CPP,
    OPENAI,
    AssistantMessage,
    LlmRequest,
    Message,
    NamedToolChoice,
    ProviderProfile,
    ToolCall,
    ToolMessage,
    ToolSchema,
    UserMessage,
)
from starharness.runtime.llm.wire import WireEncoder, dumps_wire, to_wire_messages, to_wire_tools

WEATHER = ToolSchema(
    name="weather",
    description="Weather for a city.",
    parameters=MappingProxyType(
        {
            "type": "object",
            "properties": MappingProxyType({"city": {"type": "string"}}),
            "required": ("city",),
        }
    ),
)

QUESTION = UserMessage("Wie ist das Wetter in Zürich?")
HISTORY = [
    QUESTION,
    AssistantMessage(
        text="",
        reasoning="The user wants weather.",
        tool_calls=(ToolCall("call-1", "weather", '{"city":"Zürich"}'),),
    ),
    ToolMessage("call-1", "sunny, 21°C"),
    AssistantMessage(text="Sonnig, 21°C."),
    UserMessage("now", source="context"),
]


def test_messages_follow_the_chat_completions_shape() -> None:
    wire = to_wire_messages("You are terse.", HISTORY, profile=DEEPSEEK)
    assert wire == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Wie ist das Wetter in Zürich?"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "The user wants weather.",
            "tool_calls": [
                {
                    "id": "call-1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city":"Zürich"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call-1", "content": "sunny, 21°C"},
        {"role": "assistant", "content": "Sonnig, 21°C."},
        {"role": "user", "content": "now"},
    ]


def test_reasoning_is_sent_back_only_when_the_profile_says_so() -> None:
    openai_wire = to_wire_messages("", HISTORY[:2], profile=OPENAI)
    assert openai_wire[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call-1",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city":"Zürich"}'},
            }
        ],
    }
    deepseek_wire = to_wire_messages("", HISTORY[:2], profile=DEEPSEEK)
    assert deepseek_wire[1]["reasoning_content"] == "The user wants weather."


def test_empty_system_prompt_is_left_out_and_empty_arguments_become_an_object() -> None:
    message = AssistantMessage(tool_calls=(ToolCall("c", "ping", ""),))
    wire = to_wire_messages("", [message])
    assert wire == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "ping", "arguments": "{}"}}
            ],
        }
    ]


def test_tools_are_plain_json_and_cached_per_schema_object() -> None:
    encoder = WireEncoder(DEEPSEEK)
    first = encoder.tool_dicts([WEATHER])
    assert first == [
        {
            "type": "function",
            "function": {
                "name": "weather",
                "description": "Weather for a city.",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
        }
    ]
    assert encoder.tool_dicts([WEATHER])[0] is first[0]
    twin = ToolSchema(WEATHER.name, WEATHER.description, WEATHER.parameters)
    assert encoder.tool_dicts([twin])[0] is not first[0]
    assert to_wire_tools([WEATHER]) == first


def test_messages_json_is_the_dump_of_the_dicts_and_reuses_each_message_encoding() -> None:
    encoder = WireEncoder(DEEPSEEK)
    encoded = encoder.messages_json("sys", HISTORY)
    assert encoded.decode() == dumps_wire(encoder.message_dicts("sys", HISTORY))
    longer = [*HISTORY, UserMessage("next")]
    assert encoder.messages_json("sys", longer).startswith(encoded[:-1])
    # Equal content in a new object encodes the same, whether cached or not.
    copy = [UserMessage(QUESTION.content)]
    assert encoder.messages_json("", copy) == encoder.messages_json("", HISTORY[:1])


def test_lone_surrogates_fall_back_to_ascii_escapes() -> None:
    encoder = WireEncoder(DEEPSEEK)
    encoded = encoder.messages_json("", [UserMessage("bad \udcff byte")])
    assert json.loads(encoded) == [{"role": "user", "content": "bad \udcff byte"}]


def _request(**changes: object) -> LlmRequest:
    request = LlmRequest(
        model="m1", system="sys", messages=HISTORY[:1], session_id="s", tools=(WEATHER,)
    )
    for name, value in changes.items():
        setattr(request, name, value)
    return request


def test_body_carries_model_stream_usage_tools_and_limits() -> None:
    body = json.loads(WireEncoder(DEEPSEEK).body(_request(max_tokens=77, temperature=0.5)))
    assert body == {
        "model": "m1",
        "messages": to_wire_messages("sys", HISTORY[:1]),
        "tools": to_wire_tools([WEATHER]),
        "tool_choice": "auto",
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 77,
        "temperature": 0.5,
    }


def test_openai_body_uses_its_token_field_and_cache_key() -> None:
    body = json.loads(WireEncoder(OPENAI).body(_request(max_tokens=5), cache_key="sh-abc"))
    assert body["max_completion_tokens"] == 5
    assert "max_tokens" not in body
    assert body["prompt_cache_key"] == "sh-abc"
    deepseek = json.loads(WireEncoder(DEEPSEEK).body(_request(), cache_key="sh-abc"))
    assert "prompt_cache_key" not in deepseek


def test_named_tool_choice_and_profiles_without_it() -> None:
    choice = NamedToolChoice("weather")
    body = json.loads(WireEncoder(DEEPSEEK).body(_request(tool_choice=choice)))
    assert body["tool_choice"] == {"type": "function", "function": {"name": "weather"}}
    limited = ProviderProfile(
        name="limited",
        default_model="x",
        default_base_url=None,
        api_key_env=None,
        base_url_env=None,
        supports_named_tool_choice=False,
        stream_usage=False,
    )
    body = json.loads(WireEncoder(limited).body(_request(tool_choice=choice)))
    assert body["tool_choice"] == "required"
    assert "stream_options" not in body
    no_tools = json.loads(WireEncoder(DEEPSEEK).body(_request(tools=())))
    assert "tools" not in no_tools and "tool_choice" not in no_tools


@given(st.text(max_size=30), st.sampled_from([True, False]))
def test_a_begun_call_goes_last_only_to_a_server_that_continues_calls(
    words: str, null_content: bool
) -> None:
    begun = '{"city":' + json.dumps(words)[:-1]
    choice = NamedToolChoice("weather", begun)
    continuing = replace(LLAMA_CPP, null_content_with_tool_calls=null_content)
    body = json.loads(WireEncoder(continuing).body(_request(tool_choice=choice)))
    assert body["tool_choice"] == {"type": "function", "function": {"name": "weather"}}
    *history, last = body["messages"]
    assert history == json.loads(WireEncoder(continuing).body(_request()))["messages"]
    assert last["role"] == "assistant"
    assert last["content"] == (None if null_content else "")
    assert [call["function"] for call in last["tool_calls"]] == [
        {"name": "weather", "arguments": begun}
    ]
    # Any other server is sent the plain forced choice.
    assert WireEncoder(DEEPSEEK).body(_request(tool_choice=choice)) == WireEncoder(DEEPSEEK).body(
        _request(tool_choice=NamedToolChoice("weather"))
    )


def test_extra_fields_are_added_replace_standard_ones_or_drop_them() -> None:
    extra = {"top_p": 0.9, "stream_options": None, "model": "other", "thinking": {"type": "on"}}
    raw = WireEncoder(DEEPSEEK).body(_request(extra=extra))
    body = json.loads(raw)
    assert body["top_p"] == 0.9
    assert body["thinking"] == {"type": "on"}
    assert body["model"] == "other"
    assert "stream_options" not in body
    assert raw.count(b'"model"') == 1


def test_each_message_is_encoded_once_while_it_lives_and_forgotten_after() -> None:
    encoder = WireEncoder(DEEPSEEK)
    cache = encoder._messages  # pyright: ignore[reportPrivateUsage]
    before = len(cache)
    history = [UserMessage(f"line {n}") for n in range(10_000)]  # more than any fixed bound
    first = encoder.messages_json("", history)
    assert len(cache) == before + len(history)
    assert encoder.messages_json("", history) == first
    del history
    gc.collect()
    assert len(cache) == before
    # A new message that may reuse a dead one's id is encoded from its own content.
    assert json.loads(encoder.messages_json("", [UserMessage("fresh")])) == [
        {"role": "user", "content": "fresh"}
    ]


_MESSAGES = st.one_of(
    st.builds(UserMessage, st.text(max_size=20)),
    st.builds(ToolMessage, st.text(max_size=5), st.text(max_size=20), st.booleans()),
    st.builds(
        AssistantMessage,
        st.text(max_size=20),
        st.none() | st.text(max_size=10),
        st.lists(
            st.builds(ToolCall, st.text(max_size=5), st.text(max_size=8), st.text(max_size=12)),
            max_size=2,
        ).map(tuple),
    ),
)


@given(st.lists(_MESSAGES, max_size=8), st.integers(0, 8))
def test_cached_encodings_match_a_fresh_dump_of_any_history(
    history: list[Message], cut: int
) -> None:
    encoder = WireEncoder(DEEPSEEK)
    encoder.messages_json("", history[:cut])  # part of it cached first
    encoded = encoder.messages_json("sys", history)
    assert encoded.decode() == dumps_wire(encoder.message_dicts("sys", history))
    assert len(json.loads(encoded)) == len(history) + 1
