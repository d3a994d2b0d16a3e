"""What a successful call returns."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import JsonValue


@dataclass(frozen=True, slots=True)
class RpcReply:
    """The addon's result for one call, and which editor gave it."""

    method: str
    result: JsonValue
    client_id: str
    # Set when the default route fell back to another editor of the same project.
    routed_to: str | None = None
