"""The web UI's Starlette app: the page, the session protocol over WebSocket, and read APIs."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..npc import find_transcript
from ..runtime.approvals import APPROVALS
from ..runtime.kernel import Context
from ..runtime.protocol import ApprovalRouter, Connection, HostInfo, SessionHost
from ..runtime.protocol.jsonrpc import (
    INVALID_REQUEST,
    MAX_LINE,
    RpcError,
    error_line,
    update_line,
)
from ..runtime.session import SESSIONS
from .access import TOKEN_COOKIE, Access
from .godot_panel import godot_check, godot_status
from .transcripts import transcript_detail, transcript_list

STATIC = Path(__file__).resolve().parent / "static"
"""The page's files, inside the package (so an installed wheel serves them)."""


class WebUi:
    """Serves one runtime to browsers; every WebSocket is its own protocol connection."""

    def __init__(self, ctx: Context, info: HostInfo) -> None:
        self.ctx = ctx
        self.info = info
        self.router = ApprovalRouter(ctx.maybe(APPROVALS))

    def app(self, access: Access) -> ASGIApp:
        routes = [
            Route("/", self._index),
            Route("/api/transcripts", self._transcripts),
            Route("/api/transcripts/{session_id}", self._transcript),
            Route("/api/godot", self._godot),
            Route("/api/godot/check", self._godot_check, methods=["POST"]),
            WebSocketRoute("/rpc", self._rpc),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ]
        return access.guard(Starlette(routes=routes))

    def close(self) -> None:
        self.router.close()

    async def _index(self, request: Request) -> Response:
        response = FileResponse(STATIC / "index.html", headers={"cache-control": "no-store"})
        token = request.query_params.get("token")
        if token:  # the guard let it through, so it is the right one
            response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict")
        return response

    async def _transcripts(self, request: Request) -> Response:
        return JSONResponse({"transcripts": await transcript_list(self.ctx.get(SESSIONS).store)})

    async def _transcript(self, request: Request) -> Response:
        session_id = request.path_params["session_id"]
        stored = await find_transcript(self.ctx.get(SESSIONS).store, session_id)
        if stored is None:
            return JSONResponse({"error": f"no transcript {session_id!r}"}, status_code=404)
        return JSONResponse(transcript_detail(stored))

    async def _godot(self, request: Request) -> Response:
        return JSONResponse(godot_status(self.ctx))

    async def _godot_check(self, request: Request) -> Response:
        return JSONResponse(await godot_check(self.ctx))

    async def _rpc(self, websocket: WebSocket) -> None:
        await websocket.accept()
        outgoing: asyncio.Queue[str | None] = asyncio.Queue()
        host = SessionHost(
            self.ctx,
            self.router,
            self.info,
            lambda update: outgoing.put_nowait(update_line(update)),
        )
        connection = Connection(host, outgoing.put_nowait)
        writer = asyncio.create_task(_write(websocket, outgoing))

        async def read_line() -> str | None:
            while True:
                try:
                    message = await websocket.receive()
                except (WebSocketDisconnect, RuntimeError):
                    return None
                if message["type"] != "websocket.receive":
                    return None  # websocket.disconnect
                text: str | None = message.get("text")
                if text is None:  # a binary frame: read as the UTF-8 text it should have been
                    text = bytes(message.get("bytes") or b"").decode("utf-8", errors="replace")
                # The same limit as on stdio (uvicorn closes with 1009 past its ws_max_size).
                if len(text) > MAX_LINE // 4 and len(text.encode("utf-8")) > MAX_LINE:
                    too_long = RpcError(
                        INVALID_REQUEST, f"a message is longer than {MAX_LINE} bytes"
                    )
                    outgoing.put_nowait(error_line(None, too_long))
                    continue
                return text

        try:
            await connection.run(read_line)
        finally:
            outgoing.put_nowait(None)
            with contextlib.suppress(Exception):
                await writer
            # A client that left first makes the close raise WebSocketDisconnect: leaving is
            # how every tab and SDK client ends, not an error to log.
            with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                await websocket.close()


async def _write(websocket: WebSocket, outgoing: asyncio.Queue[str | None]) -> None:
    while True:
        line = await outgoing.get()
        if line is None:
            return
        try:
            await websocket.send_text(line)
        except (WebSocketDisconnect, RuntimeError):
            return
