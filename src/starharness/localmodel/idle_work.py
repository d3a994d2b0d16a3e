"""Work the model server does while no request is in flight.

A player reads an NPC's line and types the next one: seconds in which the model server, which
serves requests one at a time, has nothing to do. `IdleWork` wraps the server's ASGI app,
counts the HTTP requests in flight, and once none has been for a short while runs the one job
the chat handler left for that moment (see `llama_child`: evaluating the tokens the next
request is all but certain to begin with). A request that arrives while the job runs waits for
it; one that arrives before it starts puts it off until the server is idle again. A job never
runs beside a request, whatever its endpoint, so it may use the model as a request does.

Nothing here imports llama_cpp: a job is any callable, run in a worker thread.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final, TypeAlias

Scope: TypeAlias = MutableMapping[str, Any]
Message: TypeAlias = MutableMapping[str, Any]
Receive: TypeAlias = Callable[[], Awaitable[Message]]
Send: TypeAlias = Callable[[Message], Awaitable[None]]
ASGIApp: TypeAlias = Callable[[Scope, Receive, Send], Awaitable[None]]
IdleJob: TypeAlias = Callable[[], None]

IDLE_DELAY_S: Final = 0.3
"""How long the server is idle before the job runs. The harness sends the next request of a
turn within milliseconds of the last one's end (2-4 ms measured on two cores), and no player
answers an NPC in 0.3 s, so a job runs between turns, not between a decision and its speech,
where it would only delay the speech."""


class IdleWork:
    """An ASGI app that runs `app` and, between requests, the job last handed to `after`."""

    def __init__(self, app: ASGIApp, *, delay_s: float = IDLE_DELAY_S) -> None:
        self._app = app
        self._delay_s = delay_s
        self._lock = threading.Lock()  # `after` is called from the handler's worker threads
        self._pending: IdleJob | None = None
        self._in_flight = 0
        self._timer: asyncio.TimerHandle | None = None
        self._running: asyncio.Task[None] | None = None

    def after(self, job: IdleJob | None) -> None:
        """Run `job` the next time the server is idle, instead of any job not started yet
        (None: no job). Safe from any thread."""
        with self._lock:
            self._pending = job

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._app(scope, self._until_shutdown(receive), send)
            return
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        self._in_flight += 1
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        try:
            if self._running is not None:
                # Shielded: a client that gives up waiting must not leave a job half-owned.
                await asyncio.shield(self._running)
            await self._app(scope, receive, send)
        finally:
            self._in_flight -= 1
            self._schedule()

    async def wait_idle(self) -> None:
        """Wait for a job that is running to end (tests, shutdown)."""
        if self._running is not None:
            await asyncio.shield(self._running)

    def _schedule(self) -> None:
        if self._in_flight or self._timer is not None or self._running is not None:
            return
        with self._lock:
            if self._pending is None:
                return
        self._timer = asyncio.get_running_loop().call_later(self._delay_s, self._start)

    def _start(self) -> None:
        self._timer = None
        if self._in_flight or self._running is not None:
            return
        with self._lock:
            job, self._pending = self._pending, None
        if job is not None:
            self._running = asyncio.get_running_loop().create_task(self._run(job))

    async def _run(self, job: IdleJob) -> None:
        started = time.perf_counter()
        try:
            await asyncio.to_thread(job)
        except Exception as exc:  # a job is an optimisation: the server goes on without it
            took = time.perf_counter() - started
            print(f"star-harness idle work failed after {took:.2f} s: {exc!r}", file=sys.stderr)
        finally:
            self._running = None
            self._schedule()

    def _until_shutdown(self, receive: Receive) -> Receive:
        """`receive` for the lifespan scope: a running job ends before the app shuts down."""

        async def wrapped() -> Message:
            message = await receive()
            if message.get("type") == "lifespan.shutdown":
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None
                await self.wait_idle()
            return message

        return wrapped
