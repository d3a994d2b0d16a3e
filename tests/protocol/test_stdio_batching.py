"""The stdio server's line batching: nothing reordered or lost, an answer leaves at once with the
updates before it, and an update alone is written after a few loop passes (never held)."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from starharness.runtime.protocol.stdio import LineBatcher

_ops = st.lists(
    st.tuples(st.sampled_from(["update", "answer"]), st.integers(min_value=0, max_value=12)),
    max_size=30,
)


async def _passes(count: int) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


@settings(max_examples=200, deadline=None)
@given(ops=_ops)
def test_lines_leave_in_order_answers_at_once_updates_soon(ops: list[tuple[str, int]]) -> None:
    async def run() -> None:
        writes: list[bytes] = []
        lines = LineBatcher(writes.append, passes=8)
        sent: list[str] = []
        for n, (kind, gap) in enumerate(ops):
            line = f"{kind}-{n}"
            sent.append(line)
            if kind == "answer":
                lines.answer(line)
                # An answer is written before answer() returns, behind everything before it.
                assert writes and writes[-1].decode().endswith(f"{line}\n")
            else:
                lines.update(line)
            await _passes(gap)
        await _passes(10)  # more than `passes`: a lone update is out by now
        written = b"".join(writes).decode()
        assert written == "".join(f"{line}\n" for line in sent)

    asyncio.run(run())


def test_an_update_and_the_answer_right_after_it_share_one_write() -> None:
    async def run() -> list[bytes]:
        writes: list[bytes] = []
        lines = LineBatcher(writes.append, passes=8)
        lines.update("turn.end")
        await _passes(3)
        lines.answer("result")
        await _passes(10)
        return writes

    assert asyncio.run(run()) == [b"turn.end\nresult\n"]
