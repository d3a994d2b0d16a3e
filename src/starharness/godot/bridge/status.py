"""The bridge's status snapshot, as shown by status commands and MCP."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class _Snapshot(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict with camelCase keys."""
        return self.model_dump(mode="json", by_alias=True)


class ClientStatus(_Snapshot):
    """One connection, authenticated or not yet."""

    id: str
    authenticated: bool
    active: bool
    project_path: str
    matches_workspace: bool
    godot_version: str
    addon_version: str
    connected_at: datetime
    scene: str | None
    in_flight: int


class PlayErrorRecord(_Snapshot):
    """A play error reported by an editor, kept in the bridge's ring buffer."""

    client_id: str
    severity: str
    message: str
    at: datetime


class ErrorRecord(_Snapshot):
    """A recent failure of a call or of the protocol."""

    at: datetime
    code: str
    message: str


class BridgeStatus(_Snapshot):
    """Everything an operator needs to see why calls do or do not reach an editor."""

    running: bool
    host: str
    port: int | None
    pid: int
    endpoint_path: str
    started_at: datetime | None
    workspace: str | None
    enabled_tools: list[str]
    clients: list[ClientStatus]
    active_client_id: str | None
    authenticated_clients: int
    handshake_failures: int
    last_handshake_failure: str | None
    last_handshake_failure_advice: str | None
    last_addon_version: str | None
    last_errors: list[ErrorRecord]
    last_event: str | None
    play_errors: list[PlayErrorRecord]
    play_errors_dropped: int
    warnings: list[str]
