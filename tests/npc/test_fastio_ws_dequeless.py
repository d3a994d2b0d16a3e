"""The light queue and event behave as asyncio's for what uvicorn's protocol asks of them."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from starharness._fastio.ws_dequeless import LightEvent, LightQueue


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers()), max_size=40))
def test_the_queue_hands_out_items_in_order_whoever_waits(steps: list[tuple[bool, int]]) -> None:
    """Interleaved puts and gets (a get waiting on an empty queue included) keep FIFO order."""

    async def run() -> tuple[list[int], list[int]]:
        queue: LightQueue[int] = LightQueue()
        got: list[int] = []
        put: list[int] = []
        pending: list[asyncio.Task[int]] = []
        for is_get, value in steps:
            if is_get:
                pending.append(asyncio.create_task(queue.get()))
                await asyncio.sleep(0)
            else:
                queue.put_nowait(value)
                put.append(value)
                await asyncio.sleep(0)
        for _ in range(len(pending) - len(put)):
            queue.put_nowait(-1)
            put.append(-1)
        for task in pending:
            got.append(await task)
        while not queue.empty():
            got.append(await queue.get())
        return put, got

    put, got = asyncio.run(run())
    assert got == put


async def test_a_cancelled_get_loses_no_item() -> None:
    queue: LightQueue[str] = LightQueue()
    waiting = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    queue.put_nowait("a")
    waiting.cancel()  # cancelled after the item was offered, before it resumed
    await asyncio.gather(waiting, return_exceptions=True)
    assert queue.qsize() == 1
    assert await queue.get() == "a"
    assert queue.empty()


async def test_the_event_wakes_every_waiter_and_a_set_event_does_not_block() -> None:
    event = LightEvent()
    waiters = [asyncio.create_task(event.wait()) for _ in range(3)]
    await asyncio.sleep(0)
    assert not any(w.done() for w in waiters)
    event.set()
    assert await asyncio.gather(*waiters) == [True, True, True]
    assert event.is_set()
    assert await asyncio.wait_for(event.wait(), 1)
    event.clear()
    late = asyncio.create_task(event.wait())
    await asyncio.sleep(0.01)
    assert not late.done()
    late.cancel()
    await asyncio.gather(late, return_exceptions=True)
    event.set()  # a cancelled waiter is skipped
    assert event.is_set()


class _Hooked(LightQueue[str]):
    """Counts the hooks `take` and `put_nowait` call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def _taken(self) -> None:
        self.calls.append("taken")

    def _handed_off(self) -> None:
        self.calls.append("handed off")


async def test_take_hands_queued_items_at_once_and_later_ones_on_put() -> None:
    queue = _Hooked()
    queue.put_nowait("a")
    queue.put_nowait("b")
    first = queue.take()
    assert first.done() and first.result() == "a"
    assert await queue.take() == "b"
    assert queue.calls == ["taken", "taken"]
    waiting = queue.take()
    assert not waiting.done()
    with pytest.raises(RuntimeError):
        queue.take()  # one reader at a time
    queue.put_nowait("c")
    assert await waiting == "c"
    assert queue.empty()  # handed over, not queued
    assert queue.calls == ["taken", "taken", "handed off"]
    queue.put_nowait("d")  # nobody waits: it is queued
    assert queue.qsize() == 1


async def test_a_cancelled_take_leaves_the_next_item_in_line() -> None:
    queue = _Hooked()
    reader = asyncio.ensure_future(queue.take())
    await asyncio.sleep(0)
    reader.cancel()
    await asyncio.gather(reader, return_exceptions=True)
    queue.put_nowait("a")
    assert queue.qsize() == 1
    assert queue.calls == []
    assert await queue.take() == "a"
