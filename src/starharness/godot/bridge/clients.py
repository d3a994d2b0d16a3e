"""One connected editor and the calls waiting for its answers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from ..errors import GodotError
from ..protocol.messages import RpcResponse


@dataclass(slots=True, eq=False)
class PendingCall:
    """A request sent to an editor, waiting for the response with the same id."""

    method: str
    future: asyncio.Future[RpcResponse]


@dataclass(slots=True, eq=False)
class EditorClient:
    """A connection from an addon; it becomes a call target once its token checks out."""

    id: str
    transport: asyncio.WriteTransport
    connected_at: datetime
    authenticated: bool = False
    vouched: bool = False
    """Its first line carried the right token (it is pairing, or paired)."""
    project_path: str = ""
    project_key: str = ""
    godot_version: str = ""
    addon_version: str = ""
    scene: str | None = None
    pending: dict[str, PendingCall] = field(default_factory=dict[str, PendingCall])

    def fail_pending(self, make_error: Callable[[str], GodotError]) -> None:
        """Fail every in-flight call at once with the error built for its method."""
        calls = list(self.pending.values())
        self.pending.clear()
        for call in calls:
            if not call.future.done():
                call.future.set_exception(make_error(call.method))
