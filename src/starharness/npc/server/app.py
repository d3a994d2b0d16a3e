"""The Starlette app: WebSocket `/gh`, `/healthz`, `/readyz`, `/metrics` and an optional web
root."""

from __future__ import annotations

import logging
from collections.abc import Awaitable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from ...runtime.hostguard import HostGuard, Refusal
from ..frames import ErrorCode
from ..game_schema import game_schema_text
from .connection import FrameWebSocket
from .metrics import CONTENT_TYPE
from .npc_server import NpcServer

_log = logging.getLogger("starharness.npc.server")
FRAME_PATH = "/gh"
FRAME_SCHEMA_PATH = "/frames.schema.json"
"""The game's frame schema over HTTP, for clients that render any game."""


def build_app(server: NpcServer) -> ASGIApp:
    """The ASGI app serving `server`; without a web root `GET /` is 404 (headless).

    Every route sits behind the Host allow-list (loopback names plus `public_names`).
    """

    async def healthz(request: Request) -> Response:
        return JSONResponse(
            {
                "ok": True,
                "game": server.game.name,
                "connections": len(server.connections),
                "encounters": len(server.encounters),
            }
        )

    async def readyz(request: Request) -> Response:
        # A load balancer sends new players only to workers that can serve them fully.
        down = await server.not_ready()
        body = {"ready": not down, "worker": server.metrics.worker}
        if down:
            # `down` names each failing part; `reason` says it all in one line.
            reason = "; ".join(down.values())
            return JSONResponse({**body, "down": down, "reason": reason}, status_code=503)
        return JSONResponse(body)

    async def metrics(request: Request) -> Response:
        if not server.may_read_metrics(request.headers, request.query_params):
            return PlainTextResponse("unauthorized: the auth token is missing or wrong", 401)
        return Response(server.metrics.render(), media_type=CONTENT_TYPE)

    schema: str | None = None

    async def frame_schema(request: Request) -> Response:
        # The game's own schema (moods, attitude range, HUD), as `star-harness schema` writes
        # it: a client renders this game, not the sample one, from it. Built once, on demand.
        nonlocal schema
        if schema is None:
            schema = game_schema_text(server.game)
        return Response(schema, media_type="application/schema+json")

    routes: list[BaseRoute] = [
        Route("/healthz", healthz),
        Route("/readyz", readyz),
        Route("/metrics", metrics),
        Route(FRAME_SCHEMA_PATH, frame_schema),
    ]
    web_root = server.settings.web_root
    if web_root is not None:
        routes.append(Mount("/", StaticFiles(directory=web_root, html=True), name="web"))

    def refused(scope: Scope, refusal: Refusal) -> None:
        server.metrics.errors.labels(ErrorCode.UNAUTHORIZED.value).inc()
        _log.warning("refused a %s: %s (%d)", scope["type"], refusal.reason, refusal.status)

    return HostGuard(
        _FrameSocket(server, Starlette(routes=routes)),
        server.hosts,
        hint="; to serve it, start the server with --public-name NAME",
        on_refused=refused,
    )


class _FrameSocket:
    """WebSockets on FRAME_PATH go straight to the server; everything else to the Starlette app.

    Starlette's middleware and routing add about a dozen coroutine frames and closures, alive
    as long as the WebSocket is open (about 4.6 KB per connection with 1,000 open); the route
    needs none of them (it raises no HTTP or WebSocket exceptions for handlers to map).
    """

    __slots__ = ("_app", "_server")

    def __init__(self, server: NpcServer, app: ASGIApp) -> None:
        self._server = server
        self._app = app

    def __call__(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[None]:
        if scope["type"] == "websocket" and scope["path"] == FRAME_PATH:
            return self._server.connect(FrameWebSocket(scope, receive, send))
        return self._app(scope, receive, send)
