"""Merge the deltas that arrived together, so a burst of stream events costs one chunk."""

from __future__ import annotations

from collections.abc import Sequence

from .types import ReasoningDelta, StreamChunk, TextDelta, ToolCallDelta


def merge_deltas(chunks: Sequence[StreamChunk]) -> list[StreamChunk]:
    """Join neighbouring deltas of the same kind (and tool call); order and meaning are kept.

    Folding the result gives the same message as folding `chunks`: text and arguments
    concatenate, and a tool call's id and name are the last ones given.
    """
    out: list[StreamChunk] = []
    for chunk in chunks:
        merged = _joined(out[-1], chunk) if out else None
        if merged is None:
            out.append(chunk)
        else:
            out[-1] = merged
    return out


def _joined(first: StreamChunk, second: StreamChunk) -> StreamChunk | None:
    if isinstance(first, ToolCallDelta):
        if isinstance(second, ToolCallDelta) and second.index == first.index:
            return ToolCallDelta(
                first.index,
                second.id or first.id,
                second.name or first.name,
                first.arguments_delta + second.arguments_delta,
            )
        return None
    if isinstance(first, TextDelta):
        return TextDelta(first.text + second.text) if isinstance(second, TextDelta) else None
    if isinstance(first, ReasoningDelta) and isinstance(second, ReasoningDelta):
        return ReasoningDelta(first.text + second.text)
    return None
