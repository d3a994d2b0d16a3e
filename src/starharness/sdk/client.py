"""The SDK's client: requests with ids, answers matched to them, updates routed to sessions."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from pydantic import BaseModel

from ..runtime.protocol import (
    PROTOCOL_VERSION,
    UPDATE_ADAPTER,
    UPDATE_METHOD,
    CreateSession,
    InitializeParams,
    InitializeResult,
    ListSessions,
    PeerInfo,
    ResumeSession,
    SessionList,
    SessionOpened,
    SessionSummary,
    SessionUpdate,
    ShutdownParams,
)
from .errors import ConnectionLostError, RpcCallError
from .session import ClientSession
from .transports import (
    ChildProcessTransport,
    LineTransport,
    StreamTransport,
    WebSocketTransport,
    rpc_command,
)

_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class Client:
    """A connection to a session-protocol server. Use `spawn` or `connect`, then `async with`."""

    def __init__(self, transport: LineTransport) -> None:
        self.transport = transport
        self.server: InitializeResult | None = None
        self._next_id = 0
        self._waiting: dict[int, tuple[str, asyncio.Future[Any]]] = {}
        self._sessions: dict[str, ClientSession] = {}
        self._reader: asyncio.Task[None] | None = None
        self._closed = False
        self.exit_code: int | None = None
        self._sending: set[asyncio.Task[None]] = set()
        self.unmatched: list[dict[str, Any]] = []
        """Answers that match no request of ours (errors for lines sent with `send_raw`)."""

    # -- making one --------------------------------------------------------------------------

    @classmethod
    async def spawn(
        cls,
        profile: str = "task",
        *,
        patches: Sequence[str | os.PathLike[str]] = (),
        project: str | os.PathLike[str] | None = None,
        argv: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        stderr: int | None = None,
    ) -> Client:
        """Start `star-harness rpc --profile PROFILE` as a child process and initialize."""
        command = (
            list(argv)
            if argv is not None
            else rpc_command(profile, patches=patches, project=project)
        )
        transport = await ChildProcessTransport.start(command, env=env, cwd=cwd, stderr=stderr)
        return await cls.over(transport)

    @classmethod
    async def connect(cls, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Client:
        """Speak to a server already running at the other end of these streams."""
        return await cls.over(StreamTransport(reader, writer))

    @classmethod
    async def connect_websocket(cls, url: str, *, token: str | None = None) -> Client:
        """Speak to a running `star-harness web` at `ws://HOST:PORT/rpc`."""
        return await cls.over(await WebSocketTransport.open(url, token=token))

    @classmethod
    async def over(cls, transport: LineTransport) -> Client:
        """Initialize over any line transport (the WebSocket one included)."""
        client = cls(transport)
        client._reader = asyncio.create_task(client._read_loop())
        try:
            client.server = await client.initialize()
        except BaseException:
            await client.aclose()
            raise
        return client

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- the four requests -------------------------------------------------------------------

    async def initialize(self, name: str = "starharness.sdk") -> InitializeResult:
        params = InitializeParams(protocol_version=PROTOCOL_VERSION, client=PeerInfo(name=name))
        return InitializeResult.model_validate(await self.request("initialize", params))

    async def create_session(self, session_id: str | None = None) -> ClientSession:
        """A new session (the server picks the id unless one is given)."""
        opened = SessionOpened.model_validate(
            await self.request("session", CreateSession(session_id=session_id))
        )
        return self._session(opened)

    async def resume_session(self, session_id: str) -> ClientSession:
        """A stored session, with its `history` for showing."""
        opened = SessionOpened.model_validate(
            await self.request("session", ResumeSession(session_id=session_id))
        )
        return self._session(opened)

    async def list_sessions(self, limit: int = 100) -> list[SessionSummary]:
        listed = SessionList.model_validate(
            await self.request("session", ListSessions(limit=limit))
        )
        return listed.sessions

    async def shutdown(self) -> int | None:
        """Ask the server to stop, wait for it, and return its exit code (child processes)."""
        await self.request("shutdown", ShutdownParams())
        return await self.aclose()

    # -- plumbing ----------------------------------------------------------------------------

    def _session(self, opened: SessionOpened) -> ClientSession:
        session = ClientSession(self, opened)
        self._sessions[opened.session_id] = session
        return session

    def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    async def request(self, method: str, params: BaseModel | Mapping[str, Any]) -> Any:
        """Send one request and wait for its result; RpcCallError for an error answer."""
        future = self.start_request(method, params)
        return await future

    def start_request(
        self, method: str, params: BaseModel | Mapping[str, Any]
    ) -> asyncio.Future[Any]:
        if self._closed:
            raise ConnectionLostError(f"{method}: the connection is closed")
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = (method, future)
        body = (
            params.model_dump_json(by_alias=True, exclude_none=True)
            if isinstance(params, BaseModel)
            else _DUMPS(dict(params))
        )
        line = f'{{"jsonrpc":"2.0","id":{request_id},"method":{_DUMPS(method)},"params":{body}}}'
        if isinstance(self.transport, ChildProcessTransport):
            try:  # a pipe write never waits: skip a task per request (most of them are small)
                self.transport.send_nowait(line)
            except (ConnectionError, RuntimeError) as error:
                del self._waiting[request_id]
                raise ConnectionLostError(f"{method}: sending failed: {error}") from None
            return future
        task = asyncio.get_running_loop().create_task(self.transport.send(line))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)
        task.add_done_callback(lambda sent: self._sent(request_id, sent))
        return future

    def _sent(self, request_id: int, sent: asyncio.Future[None]) -> None:
        error = None if sent.cancelled() else sent.exception()
        if error is None:
            return
        waiting = self._waiting.pop(request_id, None)
        if waiting is not None and not waiting[1].done():
            waiting[1].set_exception(ConnectionLostError(f"{waiting[0]}: sending failed: {error}"))

    async def send_raw(self, line: str) -> None:
        """Send a line as it is (tests of a server's error handling)."""
        await self.transport.send(line)

    async def _read_loop(self) -> None:
        try:
            while True:
                line = await self.transport.receive()
                if line is None:
                    break
                if line.strip():
                    self._dispatch(line)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._lost()

    def _dispatch(self, line: str) -> None:
        message = json.loads(line)
        if not isinstance(message, dict):
            return
        fields: dict[str, Any] = message  # pyright: ignore[reportUnknownVariableType]
        if fields.get("method") == UPDATE_METHOD:
            update: SessionUpdate = UPDATE_ADAPTER.validate_python(fields.get("params"))
            session = self._sessions.get(update.session_id)
            if session is not None:
                session.deliver(update)
            return
        request_id = fields.get("id")
        waiting = self._waiting.pop(request_id, None) if isinstance(request_id, int) else None
        if waiting is None:
            self.unmatched.append(fields)
            return
        method, future = waiting
        if future.done():
            return
        error = fields.get("error")
        if isinstance(error, dict):
            details: dict[str, Any] = error  # pyright: ignore[reportUnknownVariableType]
            future.set_exception(
                RpcCallError(
                    method,
                    int(details.get("code", 0)),
                    str(details.get("message", "")),
                    details.get("data"),
                )
            )
        else:
            future.set_result(fields.get("result"))

    def _lost(self) -> None:
        self._closed = True
        for method, future in self._waiting.values():
            if not future.done():
                future.set_exception(ConnectionLostError(f"{method}: the server went away"))
        self._waiting.clear()
        for session in self._sessions.values():
            session.connection_lost()

    async def aclose(self) -> int | None:
        """Close the transport and stop reading; a child process's exit code."""
        if self._reader is None:
            return self.exit_code
        reader, self._reader = self._reader, None
        sending = list(self._sending)
        for task in sending:
            task.cancel()
        await asyncio.gather(*sending, return_exceptions=True)
        self.exit_code = await self.transport.aclose()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(reader), 5.0)
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        return self.exit_code
