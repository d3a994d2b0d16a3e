"""Which editor a call goes to: only editors of the workspace's project are legal targets."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from .. import errors


def project_key(path: str) -> str:
    """A comparable project folder: absolute, symlinks resolved, no trailing separator.

    Blocking (it resolves symlinks), so call it from a worker thread.
    """
    if not path.strip():
        return ""
    resolved = os.path.realpath(Path(path.strip()).expanduser())
    trimmed = resolved.rstrip("/\\") or resolved
    return os.path.normcase(trimmed)


class RoutableClient(Protocol):
    """What routing needs to know about a connected editor."""

    @property
    def id(self) -> str: ...
    @property
    def authenticated(self) -> bool: ...
    @property
    def project_path(self) -> str: ...
    @property
    def project_key(self) -> str: ...


ClientT = TypeVar("ClientT", bound=RoutableClient)


def matches(client: RoutableClient, workspace_key: str | None) -> bool:
    """True when the client may receive calls for this workspace (any project if none is set)."""
    return workspace_key is None or client.project_key == workspace_key


def resolve_target(
    clients: Sequence[ClientT],
    *,
    active_id: str | None,
    workspace: str | None,
    workspace_key: str | None,
    explicit_id: str | None,
    failures: int,
    last_failure: errors.HandshakeFailure | None,
) -> tuple[ClientT, str | None]:
    """The client to call and, when the default route fell back, its id for `routedTo`."""
    authenticated = [client for client in clients if client.authenticated]
    if explicit_id is not None:
        chosen = next((c for c in authenticated if c.id == explicit_id), None)
        if chosen is None:
            raise errors.client_not_found(explicit_id, [c.id for c in authenticated])
        if not matches(chosen, workspace_key):
            raise errors.client_other_project(chosen.id, chosen.project_path, workspace or "")
        return chosen, None
    if not authenticated:
        raise errors.no_editor(failures, last_failure)
    legal = [client for client in authenticated if matches(client, workspace_key)]
    if not legal:
        described = [f"{c.id} ({c.project_path or 'unknown project'})" for c in authenticated]
        raise errors.no_editor_for_project(workspace or "", described)
    active = next((c for c in legal if c.id == active_id), None)
    if active is not None:
        return active, None
    return legal[0], legal[0].id
