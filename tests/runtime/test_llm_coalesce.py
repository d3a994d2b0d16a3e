"""Deltas that arrived together are merged without changing what the step folds them into."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from starharness.runtime.llm.coalesce import merge_deltas
from starharness.runtime.llm.types import (
    Finish,
    ReasoningDelta,
    StreamChunk,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from starharness.runtime.loop.step import StepAccumulator

_texts = st.text(max_size=6)
_chunks: st.SearchStrategy[StreamChunk] = st.one_of(
    st.builds(TextDelta, _texts),
    st.builds(ReasoningDelta, _texts),
    st.builds(
        ToolCallDelta,
        st.integers(0, 2),
        st.none() | st.sampled_from(["call-a", "call-b"]),
        st.none() | st.sampled_from(["look", "say"]),
        _texts,
    ),
    st.builds(Usage, st.integers(0, 9), st.integers(0, 9)),
    st.builds(Finish, st.sampled_from(["stop", "tool-calls", "length"])),
)


def _folded(chunks: list[StreamChunk]) -> object:
    acc = StepAccumulator()
    for chunk in chunks:
        acc.add(chunk)
    return acc.result()


def _mergeable(first: StreamChunk, second: StreamChunk) -> bool:
    if isinstance(first, ToolCallDelta):
        return isinstance(second, ToolCallDelta) and second.index == first.index
    return type(first) is type(second) and isinstance(first, TextDelta | ReasoningDelta)


@given(st.lists(_chunks, max_size=30))
def test_merging_keeps_the_folded_step(chunks: list[StreamChunk]) -> None:
    merged = merge_deltas(chunks)
    assert _folded(merged) == _folded(chunks)
    assert len(merged) <= len(chunks)
    assert not any(_mergeable(a, b) for a, b in itertools.pairwise(merged))


@given(st.lists(_chunks, max_size=30))
def test_usage_and_finish_pass_through_in_order(chunks: list[StreamChunk]) -> None:
    def markers(items: list[StreamChunk]) -> list[StreamChunk]:
        return [c for c in items if isinstance(c, Usage | Finish)]

    assert markers(merge_deltas(chunks)) == markers(chunks)


def test_a_burst_of_fragments_becomes_one_delta_per_call() -> None:
    burst: list[StreamChunk] = [
        ToolCallDelta(0, "call-a", "say", '{"li'),
        ToolCallDelta(0, None, None, 'ne": "hi"}'),
        ToolCallDelta(1, "call-b", "look", "{}"),
        TextDelta("a"),
        TextDelta("b"),
    ]
    assert merge_deltas(burst) == [
        ToolCallDelta(0, "call-a", "say", '{"line": "hi"}'),
        ToolCallDelta(1, "call-b", "look", "{}"),
        TextDelta("ab"),
    ]
