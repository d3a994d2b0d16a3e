"""Token estimates and DeepSeek-style prefix-cache accounting."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

CHARS_PER_TOKEN = 4
"""The mock's tokenizer: one token per four characters, rounded up (cache hits round down)."""


def estimate_tokens(text_length: int, chars_per_token: int = CHARS_PER_TOKEN) -> int:
    """Tokens for `text_length` characters."""
    return -(-text_length // chars_per_token)


def canonical_prompt(tools: Iterable[Any], messages: Iterable[Any]) -> str:
    """The prompt as the mock's cache sees it: tools first, then messages, keys sorted."""
    # Serialising item by item keeps an appended message from disturbing the bytes before it,
    # the way a provider's rendered prompt template does.
    parts = [_dump(tool) for tool in tools]
    parts.extend(_dump(message) for message in messages)
    return "".join(parts)


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def common_prefix_length(a: str, b: str) -> int:
    """Length of the longest common prefix of `a` and `b`."""
    # Binary search on slice equality: O(n log n) memcmp instead of a Python loop per character.
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def prompt_usage(
    previous: str, current: str, chars_per_token: int = CHARS_PER_TOKEN
) -> tuple[int, int]:
    """(prompt_tokens, cached_tokens) for `current` after `previous` in the same conversation."""
    prompt_tokens = estimate_tokens(len(current), chars_per_token)
    cached = min(common_prefix_length(previous, current) // chars_per_token, prompt_tokens)
    return prompt_tokens, cached


def usage_body(
    prompt_tokens: int, cached_tokens: int, completion_tokens: int, reasoning_tokens: int
) -> dict[str, Any]:
    """The `usage` object of the final chunk, with OpenAI and DeepSeek cache fields."""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "prompt_tokens_details": {"cached_tokens": cached_tokens},
        "prompt_cache_hit_tokens": cached_tokens,
        "prompt_cache_miss_tokens": prompt_tokens - cached_tokens,
        "completion_tokens_details": {"reasoning_tokens": reasoning_tokens},
    }
