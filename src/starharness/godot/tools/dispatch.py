"""Running one godot_* tool: gate, validate, call the editor, render the answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from pydantic import ValidationError

from .. import errors
from ..errors import GodotError
from ..protocol.reply import RpcReply
from .catalogue import TOOLS_BY_NAME
from .outcome import GodotOutcome
from .results import render_result


class ToolCaller(Protocol):
    """The part of the bridge a tool call needs."""

    @property
    def enabled_tools(self) -> frozenset[str]: ...

    async def call(
        self,
        method: str,
        params: Mapping[str, object] | None = None,
        *,
        client_id: str | None = None,
    ) -> RpcReply: ...


async def run_tool(
    caller: ToolCaller,
    name: str,
    params: Mapping[str, object] | None,
    *,
    client_id: str | None = None,
) -> GodotOutcome:
    """One tool call end to end; every failure becomes an outcome with a clear message."""
    spec = TOOLS_BY_NAME.get(name)
    if spec is None:
        return GodotOutcome.failure(name, errors.unknown_tool(name, TOOLS_BY_NAME))
    if name not in caller.enabled_tools:
        return GodotOutcome.failure(name, errors.tool_disabled(name), mutating=spec.mutating)
    try:
        validated = spec.params.model_validate(dict(params or {}))
    except ValidationError as exc:
        error = errors.invalid_params(name, describe_validation(exc))
        return GodotOutcome.failure(name, error, mutating=spec.mutating)
    try:
        reply = await caller.call(spec.method, validated.to_wire(), client_id=client_id)
    except GodotError as error:
        return GodotOutcome.failure(name, error, mutating=spec.mutating)
    text, truncated = render_result(reply.result)
    if reply.routed_to is not None:
        text += f"\n[routedTo: {reply.routed_to}]"
    return GodotOutcome(
        tool=name,
        ok=True,
        text=text,
        result=reply.result,
        truncated=truncated,
        client_id=reply.client_id,
        routed_to=reply.routed_to,
        mutating=spec.mutating,
    )


def describe_validation(exc: ValidationError) -> str:
    """Pydantic errors as '<param>: <problem>' sentences a model can act on."""
    parts: list[str] = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "parameters"
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown parameter"
        parts.append(f"{where}: {message}")
    return "; ".join(parts)
