"""The Godot panel's data: the bridge's status and the one-click check (godot_editor_info)."""

from __future__ import annotations

from typing import Any

from ..godot import GODOT_BRIDGE
from ..runtime.kernel import Context

_SHOWN_PLAY_ERRORS = 20


def godot_status(ctx: Context) -> dict[str, Any]:
    """`{present: false}` when the profile has no bridge; else what the panel shows."""
    bridge = ctx.maybe(GODOT_BRIDGE)
    if bridge is None:
        return {"present": False}
    status = bridge.status().model_dump(mode="json")
    status["play_errors"] = status["play_errors"][-_SHOWN_PLAY_ERRORS:]
    return {"present": True, "status": status}


async def godot_check(ctx: Context) -> dict[str, Any]:
    """Run godot_editor_info now (read-only, so no approval) and say what came back."""
    bridge = ctx.maybe(GODOT_BRIDGE)
    if bridge is None:
        return {"ok": False, "text": "this profile has no Godot bridge (use --profile godot)"}
    outcome = await bridge.call_tool("godot_editor_info")
    return {"ok": outcome.ok, "text": outcome.text, "result": outcome.result}
