"""GodotBridge: the loopback TCP server the Godot addon connects to, and the call path."""

from __future__ import annotations

import asyncio
import itertools
import os
import secrets
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Self

from .. import errors
from ..errors import GodotError, GodotErrorCode
from ..protocol.hygiene import hygiene_problem
from ..protocol.ladder import timeout_ms
from ..protocol.messages import RESERVED_REQUEST_KEYS, RpcResponse, encode_request
from ..protocol.methods import TOOL_NAMES, gate_tool, is_allowed_method
from ..protocol.reply import RpcReply
from ..protocol.settings_rules import (
    SettingRuleError,
    check_setting_value,
    check_writable_key,
)
from ..tools.dispatch import run_tool
from ..tools.outcome import GodotOutcome
from .clients import EditorClient, PendingCall
from .connection import ConnectionRules, EditorConnection
from .endpoint import (
    EndpointFile,
    build_endpoint,
    new_token,
    read_endpoint,
    write_endpoint,
)
from .liveness import live_bridge
from .ports import candidate_ports, listen_first_free
from .registry import ClientRegistry, EventSink
from .routing import matches, project_key
from .settings import BridgeSettings
from .status import BridgeStatus, ClientStatus, PlayErrorRecord

_NO_EDITOR_CODES = frozenset({GodotErrorCode.NO_EDITOR, GodotErrorCode.NO_EDITOR_FOR_PROJECT})


def checked_tool_names(names: Iterable[str]) -> frozenset[str]:
    """The names as a set; raise ValueError naming any that is not a godot_* tool."""
    chosen = frozenset(names)
    unknown = sorted(chosen - TOOL_NAMES)
    if unknown:
        raise ValueError(f"unknown Godot tools in enabled_tools: {', '.join(unknown)}")
    return chosen


class GodotBridge:
    """Loopback TCP server for editors; `call` and `call_tool` reach the editor of the project."""

    def __init__(
        self, settings: BridgeSettings | None = None, *, event_sink: EventSink | None = None
    ) -> None:
        self._settings = settings or BridgeSettings()
        self._enabled = checked_tool_names(self._settings.enabled_tools)
        self._registry = ClientRegistry(event_sink)
        self._server: asyncio.Server | None = None
        self._endpoint: EndpointFile | None = None
        self._started_at: datetime | None = None
        self._grace_ends = 0.0
        self._connections: set[EditorConnection] = set()
        self._request_prefix = secrets.token_hex(4)
        self._request_numbers = itertools.count(1)
        self._warnings: list[str] = []

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    @property
    def settings(self) -> BridgeSettings:
        """The configuration this bridge was built with."""
        return self._settings

    @property
    def running(self) -> bool:
        """True between a successful start() and stop()."""
        return self._server is not None

    @property
    def port(self) -> int | None:
        """The port listened on, once started."""
        return self._endpoint.port if self._endpoint and self._server else None

    @property
    def endpoint(self) -> EndpointFile | None:
        """The endpoint this bridge published (host, port, token, pid)."""
        return self._endpoint

    @property
    def enabled_tools(self) -> frozenset[str]:
        """The godot_* tools that may be dispatched; all others are refused."""
        return self._enabled

    def set_enabled_tools(self, names: Iterable[str]) -> None:
        """Replace the enabled tools; the next call is checked against the new set."""
        self._enabled = checked_tool_names(names)

    async def start(self) -> None:
        """Listen, then publish the endpoint file; refuse when a live bridge already owns it."""
        if self._server is not None:
            return
        settings = self._settings
        path = settings.endpoint_file
        reading = await asyncio.to_thread(read_endpoint, path)
        existing = reading.endpoint
        if existing is not None and await live_bridge(existing, settings.probe_timeout_s):
            raise errors.bridge_already_running(existing.pid or 0, existing.port, str(path))
        if reading.problem is not None:
            self._warnings.append(f"endpoint file {path} was {reading.problem}; it was replaced")
        token = existing.token.lower() if existing else new_token()
        preferred = existing.port if existing else settings.base_port
        ports = candidate_ports(preferred, settings.base_port, settings.port_span)
        rules = ConnectionRules(
            token=token,
            handshake_timeout_s=settings.seconds(settings.handshake_timeout_ms),
            max_line_bytes=settings.max_line_bytes,
            max_handshake_bytes=settings.max_handshake_bytes,
            max_unauthenticated=settings.max_unauthenticated,
        )
        server, port = await listen_first_free(lambda: self._accept(rules), settings.host, ports)
        endpoint = build_endpoint(settings.host, port, token, os.getpid())
        try:
            await asyncio.to_thread(write_endpoint, path, endpoint)
        except OSError as exc:
            server.close()
            await server.wait_closed()
            raise errors.endpoint_write_failed(str(path), exc.strerror or str(exc)) from exc
        self._server, self._endpoint = server, endpoint
        self._started_at = datetime.now(UTC)
        loop = asyncio.get_running_loop()
        self._grace_ends = loop.time() + settings.seconds(settings.grace_period_ms)
        if settings.workspace is not None:
            await self.set_workspace(settings.workspace)

    async def stop(self) -> None:
        """Close every connection, fail in-flight calls, stop listening; keep the endpoint file."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        self._registry.close_all()
        connections = list(self._connections)
        for connection in connections:
            connection.close()
        await asyncio.gather(*(connection.wait_closed() for connection in connections))
        await server.wait_closed()

    async def set_workspace(self, workspace: str | Path | None) -> None:
        """Route calls only to editors whose project is `workspace` (None: to any editor)."""
        if workspace is None:
            self._registry.set_workspace(None, None)
            return
        text = str(workspace)
        key = await asyncio.to_thread(project_key, text)
        self._registry.set_workspace(text, key)

    def set_active_client(self, client_id: str) -> None:
        """Make a client the default target; refused for unknown or other-project clients."""
        self._registry.set_active(client_id)

    async def call(
        self,
        method: str,
        params: Mapping[str, object] | None = None,
        *,
        client_id: str | None = None,
    ) -> RpcReply:
        """Send one request and await its answer; raise GodotError with a clear message."""
        try:
            return await self._call(method, dict(params or {}), client_id)
        except GodotError as error:
            self._registry.note_error(error)
            raise

    async def call_tool(
        self,
        name: str,
        params: Mapping[str, object] | None = None,
        *,
        client_id: str | None = None,
    ) -> GodotOutcome:
        """Validate and run one godot_* tool; failures come back as an outcome, not raised."""
        return await run_tool(self, name, params, client_id=client_id)

    async def wait_for_editors(
        self, count: int = 1, *, timeout_s: float, any_project: bool = False
    ) -> bool:
        """Wait until `count` editors (of the workspace, unless `any_project`) are paired."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self._paired_editors(any_project) < count:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return False
            await self._registry.wait_for_change(remaining)
        return True

    def _paired_editors(self, any_project: bool) -> int:
        key = None if any_project else self._registry.workspace_key
        return sum(1 for c in self._registry.clients if c.authenticated and matches(c, key))

    def play_errors(self) -> list[PlayErrorRecord]:
        """Play errors reported by editors (the newest 50), oldest first."""
        return list(self._registry.play_errors)

    def clear_play_errors(self) -> None:
        """Empty the bridge's play-error buffer."""
        self._registry.clear_play_errors()

    def status(self) -> BridgeStatus:
        """A snapshot: connections, projects, handshake failures, recent errors and events."""
        registry = self._registry
        failure = registry.last_handshake_failure
        return BridgeStatus(
            running=self.running,
            host=self._settings.host,
            port=self.port,
            pid=os.getpid(),
            endpoint_path=str(self._settings.endpoint_file),
            started_at=self._started_at,
            workspace=registry.workspace,
            enabled_tools=sorted(self._enabled),
            clients=[self._client_status(client) for client in registry.clients],
            active_client_id=registry.active_id,
            authenticated_clients=sum(1 for c in registry.clients if c.authenticated),
            handshake_failures=registry.handshake_failures,
            last_handshake_failure=failure.value if failure else None,
            last_handshake_failure_advice=errors.HANDSHAKE_ADVICE[failure] if failure else None,
            last_addon_version=registry.last_addon_version,
            last_errors=list(registry.last_errors),
            last_event=registry.last_event,
            play_errors=list(registry.play_errors),
            play_errors_dropped=registry.play_errors_dropped,
            warnings=list(self._warnings),
        )

    async def _call(
        self, method: str, params: dict[str, object], client_id: str | None
    ) -> RpcReply:
        if self._server is None:
            raise errors.bridge_not_running()
        self._check_dispatchable(method, params)
        client, routed_to = await self._route(client_id)
        limit_ms = timeout_ms(method, params)
        request_id = f"{self._request_prefix}-{next(self._request_numbers)}"
        loop = asyncio.get_running_loop()
        future: asyncio.Future[RpcResponse] = loop.create_future()
        client.pending[request_id] = PendingCall(method, future)
        timer = loop.call_later(self._settings.seconds(limit_ms), _expire, future, method, limit_ms)
        try:
            self._send(client, method, encode_request(request_id, method, params))
            response = await future
        finally:
            timer.cancel()
            client.pending.pop(request_id, None)
        if not response.ok:
            raise errors.editor_error(method, response.error or "no error message given")
        return RpcReply(method, response.result, client.id, routed_to)

    def _check_dispatchable(self, method: str, params: dict[str, object]) -> None:
        if not is_allowed_method(method):
            raise errors.method_not_allowed(method)
        tool = gate_tool(method)
        if tool is not None and tool not in self._enabled:
            raise errors.tool_disabled(tool)
        reserved = sorted(RESERVED_REQUEST_KEYS & params.keys())
        if reserved:
            raise errors.invalid_params(method, f"{', '.join(reserved)} is reserved by the wire")
        problem = hygiene_problem(params)
        if problem is not None:
            raise errors.invalid_params(method, problem)
        if method == "set_project_setting":
            try:
                check_writable_key(params.get("key"))
                check_setting_value(params.get("value"))
            except SettingRuleError as exc:
                raise errors.invalid_params(method, str(exc)) from None

    async def _route(self, client_id: str | None) -> tuple[EditorClient, str | None]:
        loop = asyncio.get_running_loop()
        while True:
            try:
                return self._registry.resolve(client_id)
            except GodotError as error:
                remaining = self._grace_ends - loop.time()
                if error.code not in _NO_EDITOR_CODES or remaining <= 0:
                    raise
                await self._registry.wait_for_change(remaining)

    def _accept(self, rules: ConnectionRules) -> EditorConnection:
        connection = EditorConnection(self._registry, rules, self._connections.discard)
        self._connections.add(connection)
        return connection

    def _send(self, client: EditorClient, method: str, line: bytes) -> None:
        # Requests are small (hygiene bounds them), so the transport buffers them without
        # waiting on flow control.
        transport = client.transport
        if transport.is_closing():
            raise errors.send_failed(method, client.id, "the connection is closing")
        try:
            transport.write(line)
        except (ConnectionError, OSError, RuntimeError) as exc:
            raise errors.send_failed(method, client.id, str(exc) or type(exc).__name__) from exc

    def _client_status(self, client: EditorClient) -> ClientStatus:
        registry = self._registry
        return ClientStatus(
            id=client.id,
            authenticated=client.authenticated,
            active=client.id == registry.active_id,
            project_path=client.project_path,
            matches_workspace=client.authenticated and matches(client, registry.workspace_key),
            godot_version=client.godot_version,
            addon_version=client.addon_version,
            connected_at=client.connected_at,
            scene=client.scene,
            in_flight=len(client.pending),
        )


def _expire(future: asyncio.Future[RpcResponse], method: str, limit_ms: int) -> None:
    if not future.done():
        future.set_exception(errors.timeout(method, limit_ms))
