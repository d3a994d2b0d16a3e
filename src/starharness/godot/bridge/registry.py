"""Connected editors, the active one, handshake failures, recent errors and play errors."""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final, Literal

from .. import errors
from ..errors import GodotError, HandshakeFailure
from ..protocol.messages import EditorReady, PlayError, RpcResponse
from .clients import EditorClient
from .routing import resolve_target
from .status import ErrorRecord, PlayErrorRecord

PLAY_ERROR_CAPACITY: Final = 50
LAST_ERRORS_CAPACITY: Final = 20
MALFORMED_MESSAGE: Final = "malformed_message"

EventKind = Literal["connected", "disconnected", "handshake_failed", "scene_changed", "play_error"]


@dataclass(frozen=True, slots=True)
class BridgeEvent:
    """Something an observer of the bridge may want to show (a connect, a play error, ...)."""

    kind: EventKind
    client_id: str
    detail: dict[str, str] = field(default_factory=dict[str, str])


# Called on the event loop for every BridgeEvent; it must return quickly and not raise.
EventSink = Callable[[BridgeEvent], None]


def _now() -> datetime:
    return datetime.now(UTC)


class ClientRegistry:
    """The bridge's view of its connections; all methods run on the event loop."""

    def __init__(self, event_sink: EventSink | None = None) -> None:
        self._sink = event_sink
        self._clients: dict[str, EditorClient] = {}
        self._numbers = itertools.count(1)
        self._changed = asyncio.Event()
        self.active_id: str | None = None
        self.workspace: str | None = None
        self.workspace_key: str | None = None
        self.handshake_failures = 0
        self.last_handshake_failure: HandshakeFailure | None = None
        self.last_addon_version: str | None = None
        self.last_event: str | None = None
        self.play_errors: deque[PlayErrorRecord] = deque(maxlen=PLAY_ERROR_CAPACITY)
        self.play_errors_dropped = 0
        self.last_errors: deque[ErrorRecord] = deque(maxlen=LAST_ERRORS_CAPACITY)

    @property
    def clients(self) -> list[EditorClient]:
        """Connections in the order they arrived."""
        return list(self._clients.values())

    def open(self, transport: asyncio.WriteTransport) -> EditorClient:
        """Register a new, not yet authenticated connection under a fresh client id."""
        client = EditorClient(
            id=f"c{next(self._numbers)}", transport=transport, connected_at=_now()
        )
        self._clients[client.id] = client
        return client

    def unauthenticated(self) -> int:
        """Connections still waiting to hand-shake."""
        return sum(1 for client in self._clients.values() if not client.authenticated)

    def oldest_stranger(self) -> EditorClient | None:
        """The connection waiting longest without having shown the token, if any."""
        return next((c for c in self._clients.values() if not c.vouched), None)

    def authenticate(self, client: EditorClient, ready: EditorReady, key: str) -> None:
        """Make the client a call target and maybe the active one."""
        client.authenticated = True
        client.project_path = ready.project_path
        client.project_key = key
        client.godot_version = ready.godot_version
        client.addon_version = ready.addon_version
        self.last_addon_version = ready.addon_version or self.last_addon_version
        self._pick_active()
        self._emit("connected", client.id, {"projectPath": ready.project_path})
        self._notify()

    def close(self, client: EditorClient) -> None:
        """Forget a connection and fail its in-flight calls at once."""
        self._clients.pop(client.id, None)
        client.fail_pending(lambda method: errors.disconnected(method, client.id))
        if client.authenticated:
            if self.active_id == client.id:
                self.active_id = None
                self._pick_active()
            self._emit("disconnected", client.id)
            self._notify()

    def close_all(self) -> None:
        """Fail every call of every connection: the bridge is stopping."""
        for client in self._clients.values():
            client.fail_pending(errors.bridge_stopped)
        self._clients.clear()
        self.active_id = None
        self._notify()

    def handshake_failed(self, client: EditorClient, reason: HandshakeFailure) -> None:
        """Count a refused connection so status and 'no editor' errors can explain it."""
        self.handshake_failures += 1
        self.last_handshake_failure = reason
        self._remember(reason.value, f"{client.id} refused: {errors.HANDSHAKE_ADVICE[reason]}")
        self._emit("handshake_failed", client.id, {"reason": reason.value})

    def deliver(self, client: EditorClient, response: RpcResponse) -> None:
        """Hand a response to the call waiting for it; late answers are dropped."""
        call = client.pending.pop(response.id, None)
        if call is not None and not call.future.done():
            call.future.set_result(response)

    def fail_call(self, client: EditorClient, request_id: str, error: GodotError) -> None:
        """Fail one in-flight call (its answer could not be read)."""
        call = client.pending.pop(request_id, None)
        if call is not None and not call.future.done():
            call.future.set_exception(error)

    def scene_changed(self, client: EditorClient, path: str) -> None:
        """Track the edited scene of an editor."""
        client.scene = path
        self.last_event = f"scene_changed {path} ({client.id})"
        self._emit("scene_changed", client.id, {"path": path})

    def play_error(self, client: EditorClient, event: PlayError) -> None:
        """Keep a play error in the ring buffer (the oldest falls out when it is full)."""
        if len(self.play_errors) == self.play_errors.maxlen:
            self.play_errors_dropped += 1
        self.play_errors.append(
            PlayErrorRecord(
                client_id=client.id, severity=event.severity, message=event.message, at=_now()
            )
        )
        self.last_event = f"play_error {event.severity} ({client.id})"
        self._emit("play_error", client.id, {"severity": event.severity, "message": event.message})

    def clear_play_errors(self) -> None:
        """Empty the ring buffer."""
        self.play_errors.clear()

    def note_error(self, error: GodotError) -> None:
        """Remember a failure for the status snapshot."""
        self._remember(error.code.value, error.message)

    def note_malformed(self, client: EditorClient, problem: str) -> None:
        """Remember a line that was dropped because it is not a valid message."""
        self._remember(MALFORMED_MESSAGE, f"malformed message from {client.id} dropped: {problem}")

    def resolve(self, explicit_id: str | None) -> tuple[EditorClient, str | None]:
        """The client for a call (see routing.resolve_target)."""
        return resolve_target(
            self.clients,
            active_id=self.active_id,
            workspace=self.workspace,
            workspace_key=self.workspace_key,
            explicit_id=explicit_id,
            failures=self.handshake_failures,
            last_failure=self.last_handshake_failure,
        )

    def set_workspace(self, workspace: str | None, key: str | None) -> None:
        """Bind calls to one project folder (None: any editor may receive calls)."""
        self.workspace = workspace
        self.workspace_key = key
        self._notify()

    def set_active(self, client_id: str) -> None:
        """Make an authenticated client of this workspace the default target."""
        client, _ = self.resolve(client_id)
        self.active_id = client.id

    async def wait_for_change(self, timeout_s: float) -> None:
        """Return when a client connects, authenticates or leaves, or after `timeout_s`."""
        if timeout_s <= 0:
            return
        changed = self._changed
        try:
            async with asyncio.timeout(timeout_s):
                await changed.wait()
        except TimeoutError:
            return

    def _pick_active(self) -> None:
        # Like the editor it mirrors, the first authenticated client stays active until it
        # leaves; calls for another project fall back to a matching editor and say so.
        if self.active_id in self._clients:
            return
        chosen = next((c for c in self._clients.values() if c.authenticated), None)
        self.active_id = chosen.id if chosen is not None else None

    def _remember(self, code: str, message: str) -> None:
        self.last_errors.append(ErrorRecord(at=_now(), code=code, message=message))

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _emit(self, kind: EventKind, client_id: str, detail: dict[str, str] | None = None) -> None:
        if kind in ("connected", "disconnected", "handshake_failed"):
            self.last_event = f"{kind} ({client_id})"
        if self._sink is not None:
            self._sink(BridgeEvent(kind, client_id, detail or {}))
