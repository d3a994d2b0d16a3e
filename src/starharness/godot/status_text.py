"""The bridge status as a few lines for a terminal (`/status` in chat, the MCP server's log)."""

from __future__ import annotations

from .bridge.status import BridgeStatus

_SHOWN_ERRORS = 3


def status_lines(status: BridgeStatus) -> list[str]:
    """Where the bridge listens, which editors are paired, and why others were refused."""
    if not status.running:
        return ["Godot bridge: not running"]
    lines = [
        f"Godot bridge: 127.0.0.1:{status.port}, endpoint file {status.endpoint_path}",
        f"  project: {status.workspace or 'any'}; tools enabled: {len(status.enabled_tools)}",
    ]
    editors = [client for client in status.clients if client.authenticated]
    if not editors:
        lines.append(
            "  no editor paired: open the project in Godot 4 with the Agent RPC addon enabled"
        )
    for client in editors:
        mark = "" if client.matches_workspace else " (other project: gets no calls)"
        lines.append(
            f"  editor {client.id}: Godot {client.godot_version}, addon {client.addon_version}, "
            f"project {client.project_path}{mark}"
        )
    if status.handshake_failures:
        lines.append(
            f"  refused connections: {status.handshake_failures}; last: "
            f"{status.last_handshake_failure_advice or status.last_handshake_failure}"
        )
    for record in status.last_errors[-_SHOWN_ERRORS:]:
        lines.append(f"  recent error ({record.code}): {record.message}")
    lines.extend(f"  warning: {warning}" for warning in status.warnings)
    return lines
