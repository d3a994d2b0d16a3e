"""The Host guard is a plain callable (no frame of its own per open WebSocket), yet a server that
guesses the ASGI interface, as uvicorn does by default, still runs it as ASGI 3."""

from __future__ import annotations

import asyncio
import socket

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from starharness.runtime.hostguard import AllowedHosts, HostGuard


async def _hello(request: Request) -> PlainTextResponse:
    return PlainTextResponse("hello")


def _guarded(refused: list[int]) -> HostGuard:
    app = Starlette(routes=[Route("/", _hello)])
    hosts = AllowedHosts.of(["127.0.0.1", "localhost"])
    return HostGuard(app, hosts, on_refused=lambda scope, refusal: refused.append(1))


def test_uvicorn_guesses_asgi_3_for_the_guard() -> None:
    config = uvicorn.Config(_guarded([]))
    config.load()
    assert config.interface == "asgi3"


async def test_a_guessing_uvicorn_serves_the_guard_and_it_still_refuses() -> None:
    refused: list[int] = []
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(_guarded(refused), port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            assert not task.done(), "uvicorn stopped before it started"
            await asyncio.sleep(0.02)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            ok = await client.get("/")
            rebound = await client.get("/", headers={"host": "rebind.attacker.example"})
    finally:
        server.should_exit = True
        await task
    assert (ok.status_code, ok.text) == (200, "hello")
    assert rebound.status_code == 403 and refused == [1]
