"""The model server's idle work, served by uvicorn on a loopback socket around a small ASGI
app: a job runs only while no request is in flight, a request waits for a running job, and a
failing job leaves the server serving. Ordering is checked with events, never with timings."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import httpx
import pytest
import uvicorn

from starharness.localmodel.idle_work import IdleWork, Receive, Scope, Send
from starharness.npc.server.engine import EmbeddedServer, until_started

_DELAY_S = 0.05
_WAIT_S = 20.0


@dataclass
class _App:
    """Answers every request with 200; `/hold` and `/leave-held` answer only once `release`
    is set; `/leave` and `/leave-held` leave `job` for the idle work as they answer. Every
    request and job appends to `events` as it begins and ends."""

    events: list[str] = field(default_factory=list[str])
    release: asyncio.Event = field(default_factory=asyncio.Event)
    holding: asyncio.Event = field(default_factory=asyncio.Event)
    idle: IdleWork | None = None
    job: Callable[[], None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        path: str = scope["path"]
        self.events.append(f"request {path}")
        if path in ("/hold", "/leave-held"):
            self.holding.set()
            await self.release.wait()
        if self.idle is not None and path in ("/leave", "/leave-held"):
            self.idle.after(self.job)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})
        self.events.append(f"answered {path}")


class _Job:
    """A job that records itself and, while `gate` is clear, blocks its worker thread."""

    def __init__(self, app: _App, name: str) -> None:
        self.app = app
        self.name = name
        self.ran = threading.Event()
        self.gate = threading.Event()
        self.gate.set()

    def __call__(self) -> None:
        self.app.events.append(f"job {self.name} began")
        self.gate.wait(_WAIT_S)
        self.app.events.append(f"job {self.name} ended")
        self.ran.set()


@contextlib.asynccontextmanager
async def _serving(app: _App) -> AsyncIterator[tuple[httpx.AsyncClient, IdleWork]]:
    idle = IdleWork(app, delay_s=_DELAY_S)
    app.idle = idle
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    config = uvicorn.Config(idle, log_level="warning", access_log=False, lifespan="on")
    engine = EmbeddedServer(config)
    task = asyncio.create_task(engine.serve(sockets=[listener]))
    await until_started(engine, task, "the test server")
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            assert (await client.get("/plain")).status_code == 200
            yield client, idle
    finally:
        engine.should_exit = True
        await task


async def _until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(_WAIT_S):
        while not condition():  # noqa: ASYNC110 (set from the job's worker thread)
            await asyncio.sleep(0.01)


async def test_a_job_runs_after_the_request_that_left_it_not_during_it() -> None:
    app = _App()
    job = _Job(app, "a")
    async with _serving(app) as (client, idle):
        held = asyncio.create_task(client.get("/hold"))
        await app.holding.wait()
        # Left while a request is in flight: many delays pass and it does not run.
        idle.after(job)
        await asyncio.sleep(_DELAY_S * 10)
        assert not job.ran.is_set()
        app.release.set()
        assert (await held).status_code == 200
        await _until(job.ran.is_set)
    assert app.events[-4:] == ["request /hold", "answered /hold", "job a began", "job a ended"]


async def _a_job_running(app: _App, client: httpx.AsyncClient) -> _Job:
    """A job left by a request and now running, held in its worker thread until its `gate`."""
    job = _Job(app, "a")
    job.gate.clear()
    app.job = job
    await client.get("/leave")
    await _until(lambda: "job a began" in app.events)
    app.job = None
    return job


async def test_a_request_that_comes_while_a_job_runs_waits_for_its_end() -> None:
    app = _App()
    async with _serving(app) as (client, _):
        job = await _a_job_running(app, client)
        waiting = asyncio.create_task(client.get("/second"))
        await asyncio.sleep(_DELAY_S * 10)
        assert "request /second" not in app.events  # the job holds the model
        job.gate.set()
        assert (await waiting).status_code == 200
    at = app.events.index("job a ended")
    assert app.events[at + 1 : at + 3] == ["request /second", "answered /second"]


async def test_a_newer_job_replaces_one_not_yet_run_and_none_clears_it() -> None:
    app = _App()
    first, second, third = _Job(app, "first"), _Job(app, "second"), _Job(app, "third")
    async with _serving(app) as (client, idle):
        held = asyncio.create_task(client.get("/hold"))
        await app.holding.wait()
        idle.after(first)
        idle.after(second)
        app.release.set()
        await held
        await _until(second.ran.is_set)
        # A request that leaves None (its answer was cut short) clears the job left before.
        app.release.clear()
        app.holding.clear()
        held = asyncio.create_task(client.get("/leave-held"))
        await app.holding.wait()
        idle.after(third)
        app.job = None
        app.release.set()
        await held
        await asyncio.sleep(_DELAY_S * 10)
    assert not first.ran.is_set() and not third.ran.is_set()


async def test_a_failing_job_is_said_and_the_server_goes_on(
    capfd: pytest.CaptureFixture[str],
) -> None:
    app = _App()
    ran = threading.Event()

    def failing() -> None:
        ran.set()
        raise RuntimeError("the model is gone")

    app.job = failing
    async with _serving(app) as (client, idle):
        await client.get("/leave")
        await _until(ran.is_set)
        await idle.wait_idle()
        app.job = None
        assert (await client.get("/after")).status_code == 200
    assert "star-harness idle work failed" in capfd.readouterr().err


async def test_shutdown_waits_for_a_running_job() -> None:
    app = _App()
    async with _serving(app) as (client, _):
        job = await _a_job_running(app, client)
        release = threading.Timer(_DELAY_S * 10, job.gate.set)
        release.start()
    release.join()
    # The server's exit (lifespan shutdown) came after the job's end.
    assert app.events[-1] == "job a ended"
