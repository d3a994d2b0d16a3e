"""How a request is adapted to what its server can do, decided from the profile's quirk fields."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol, cast, runtime_checkable

# typing_extensions: the session store checks logged data against this (pydantic, Python < 3.12).
from typing_extensions import TypedDict

from .profiles import ProviderProfile
from .types import LlmRequest, NamedToolChoice

QuirkChoice = Literal["forced-tool", "unstreamed"]
"""What the provider did instead of sending the request as asked."""


class _QuirkFields(TypedDict):
    choice: QuirkChoice
    reason: str


class QuirkData(_QuirkFields, total=False):
    """How a quirk changed a request, as the session log records it (request/context's
    `quirk`); `tool` names the forced tool."""

    tool: str


@dataclass(frozen=True, slots=True)
class RequestPlan:
    """The request as it is sent, whether it streams, and the quirk that changed it (if any)."""

    request: LlmRequest
    stream: bool = True
    quirk: QuirkChoice | None = None
    reason: str = ""

    def log_data(self) -> QuirkData | None:
        """What the session log records about the adaptation; None when there was none."""
        if self.quirk is None:
            return None
        data = QuirkData(choice=self.quirk, reason=self.reason)
        choice = self.request.tool_choice
        if isinstance(choice, NamedToolChoice):
            data["tool"] = choice.name
        return data


def plan_request(profile: ProviderProfile, request: LlmRequest) -> RequestPlan:
    """Adapt `request` to `profile`: force the allowed tool, or stop streaming, or leave it be."""
    choice = request.tool_choice
    if (
        profile.streams_open_tool_choice
        or not profile.supports_tool_choice
        or not request.tools
        or choice not in ("auto", "required")
    ):
        return RequestPlan(request)
    reason = f'{profile.name} cannot stream tool_choice "{choice}"'
    forcible = request.forcible_tool
    if forcible is not None and any(tool.name == forcible for tool in request.tools):
        forced = replace(request, tool_choice=NamedToolChoice(forcible))
        return RequestPlan(forced, quirk="forced-tool", reason=reason)
    if forcible is None:
        reason += " and the caller allows no tool to be forced"
    else:
        reason += f" and the tool it allows to force ({forcible!r}) is not offered"
    return RequestPlan(request, stream=False, quirk="unstreamed", reason=reason)


@runtime_checkable
class PlansRequests(Protocol):
    """A provider that can say, before sending, how its quirks change a request."""

    def plan(self, request: LlmRequest) -> RequestPlan: ...


def strict_compatible(schema: Mapping[str, Any]) -> bool:
    """Whether a parameters schema can be sent with `strict: true` (OpenAI's rules).

    Every object must list all its properties as required and forbid others; a schema that
    does not is sent without `strict`, rather than refused by the server.
    """
    if schema.get("type") == "object" or "properties" in schema:
        properties = cast(Mapping[str, Any], schema.get("properties", {}))
        if schema.get("additionalProperties") is not False:
            return False
        if set(cast(list[str], schema.get("required", []))) != set(properties):
            return False
        if not all(strict_compatible(value) for value in properties.values()):
            return False
    for key in ("anyOf", "oneOf", "allOf"):
        for part in cast(list[Mapping[str, Any]], schema.get(key, [])):
            if not strict_compatible(part):
                return False
    items = schema.get("items")
    if isinstance(items, Mapping) and not strict_compatible(cast(Mapping[str, Any], items)):
        return False
    definitions = cast(Mapping[str, Mapping[str, Any]], schema.get("$defs", {}))
    return all(strict_compatible(value) for value in definitions.values())
