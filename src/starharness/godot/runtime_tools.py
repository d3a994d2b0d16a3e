"""The godot_* tools as runtime ToolDefinitions that call the editor through a GodotBridge."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

from pydantic import ValidationError

from ..runtime.tools import (
    MUTATING,
    REQUIRES_APPROVAL,
    ToolArgsError,
    ToolDefinition,
    ToolFailure,
    ToolRunContext,
    ToolSuccess,
    define_raw_tool,
)
from .bridge.server import GodotBridge
from .bridge.settings import BridgeSettings
from .protocol import ladder
from .tools.catalogue import GodotToolSpec
from .tools.dispatch import describe_validation

GODOT_TAG: Final = "godot"
"""Every godot_* tool carries it, so an approval policy can name them all (`tag:godot`)."""

# The registry's timeout is only a backstop: the bridge answers first with a clear message.
_BACKSTOP_MARGIN_S: Final = 5.0

Arguments = dict[str, Any]


def tool_tags(spec: GodotToolSpec) -> frozenset[str]:
    """Mutating tools (godot-rpc.md's undo list) need approval; the others run freely."""
    if spec.mutating:
        return frozenset({GODOT_TAG, MUTATING, REQUIRES_APPROVAL})
    return frozenset({GODOT_TAG})


def backstop_timeout_s(spec: GodotToolSpec, settings: BridgeSettings) -> float:
    """Longer than the slowest answer the ladder allows for the method, plus the editor grace."""
    ceiling_ms = ladder.timeout_ms(
        spec.method,
        {"wait_ms": ladder.RUN_WAIT_MAX_MS, "timeout_ms": ladder.IMPORT_WAIT_MAX_MS},
    )
    return settings.seconds(ceiling_ms + settings.grace_period_ms) + _BACKSTOP_MARGIN_S


def _parser(spec: GodotToolSpec) -> Callable[[str], Arguments]:
    def parse(raw: str) -> Arguments:
        try:
            data: object = json.loads(raw or "{}")
        except json.JSONDecodeError as exc:
            raise ToolArgsError(f"arguments are not valid JSON ({exc.msg})") from None
        if not isinstance(data, dict):
            raise ToolArgsError("arguments must be a JSON object")
        arguments: Arguments = data  # pyright: ignore[reportUnknownVariableType]
        # Validate here so a bad call fails before anyone is asked to approve it; the bridge
        # validates again on dispatch.
        try:
            spec.params.model_validate(arguments)
        except ValidationError as exc:
            raise ToolArgsError(describe_validation(exc)) from None
        return arguments

    return parse


def bridge_tool(bridge: GodotBridge, spec: GodotToolSpec) -> ToolDefinition[Arguments]:
    """One godot_* tool: parsed by its parameter model, executed by `bridge.call_tool`."""
    name = spec.name

    async def execute(arguments: Arguments, run: ToolRunContext) -> ToolSuccess | ToolFailure:
        outcome = await bridge.call_tool(name, arguments)
        if outcome.ok:
            return ToolSuccess(outcome.result, outcome.text)
        message = outcome.error_message or outcome.text.removeprefix("Error: ")
        return ToolFailure(message, str(outcome.error_code or "godot_error"))

    return define_raw_tool(
        name,
        spec.description,
        spec.json_schema(),
        _parser(spec),
        execute,
        timeout_s=backstop_timeout_s(spec, bridge.settings),
        # Answers are matched by request id, so read-only calls may overlap.
        concurrency_safe=not spec.mutating,
        tags=tool_tags(spec),
    )
