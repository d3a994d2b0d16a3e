"""Usage accounting: token estimates and prefix-cache hits per conversation."""

import httpx
from hypothesis import given
from hypothesis import strategies as st
from mockllm_client import stream_chat

from starharness.mockllm import MockLlmServer
from starharness.mockllm.usage import canonical_prompt, common_prefix_length, prompt_usage

SYSTEM = {"role": "system", "content": "You are the harbour master. " * 20}
TOOLS = [{"type": "function", "function": {"name": "dock", "parameters": {"type": "object"}}}]


def _naive_common_prefix(a: str, b: str) -> int:
    length = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        length += 1
    return length


@given(st.text(max_size=60), st.text(max_size=60), st.text(max_size=20))
def test_common_prefix_length_matches_a_naive_scan(shared: str, a: str, b: str) -> None:
    left, right = shared + a, shared + b

    assert common_prefix_length(left, right) == _naive_common_prefix(left, right)


def test_prompt_usage_counts_four_characters_per_token() -> None:
    previous = "x" * 40
    current = "x" * 42 + "y" * 10

    assert prompt_usage(previous, current) == (13, 10)
    assert prompt_usage("", current) == (13, 0)


def test_canonical_prompt_puts_tools_first_and_sorts_keys() -> None:
    prompt = canonical_prompt(TOOLS, [{"role": "user", "content": "hi"}])

    assert prompt.startswith('{"function":')
    assert prompt.endswith('{"content":"hi","role":"user"}')


async def test_cache_hits_follow_the_common_prefix_of_one_conversation(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script_each(["success"], repeat_last=True)
    first_turn = [SYSTEM, {"role": "user", "content": "May I dock?"}]
    second_turn = [
        *first_turn,
        {"role": "assistant", "content": "Which berth?"},
        {"role": "user", "content": "Berth nine."},
    ]

    first = await stream_chat(http, mock_llm.base_url, "ship", messages=first_turn, tools=TOOLS)
    second = await stream_chat(http, mock_llm.base_url, "ship", messages=second_turn, tools=TOOLS)
    other = await stream_chat(http, mock_llm.base_url, "boat", messages=second_turn, tools=TOOLS)

    shared = canonical_prompt(TOOLS, first_turn)
    assert first.usage["prompt_cache_hit_tokens"] == 0
    assert second.usage["prompt_cache_hit_tokens"] == len(shared) // 4
    assert second.usage["prompt_cache_miss_tokens"] == (
        second.usage["prompt_tokens"] - len(shared) // 4
    )
    assert second.usage["prompt_tokens"] == -(-len(canonical_prompt(TOOLS, second_turn)) // 4)
    assert other.usage["prompt_cache_hit_tokens"] == 0  # caches are per conversation


async def test_a_changed_early_message_breaks_the_cache(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    mock_llm.script_each(["success"], repeat_last=True)
    turn = [SYSTEM, {"role": "user", "content": "hello"}]
    changed = [{"role": "system", "content": "Changed! " + SYSTEM["content"]}, turn[1]]

    await stream_chat(http, mock_llm.base_url, "c", messages=turn)
    again = await stream_chat(http, mock_llm.base_url, "c", messages=turn)
    broken = await stream_chat(http, mock_llm.base_url, "c", messages=changed)

    # Identical prompts hit everything but a rounded-up partial token.
    assert again.usage["prompt_cache_miss_tokens"] <= 1
    assert again.usage["prompt_cache_hit_tokens"] > 100
    assert broken.usage["prompt_cache_hit_tokens"] < 10
