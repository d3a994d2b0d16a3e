"""Wire messages: requests out, responses and events in, one JSON object per line."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, JsonValue, StrictBool, ValidationError

EVENT_EDITOR_READY = "editor_ready"
EVENT_SCENE_CHANGED = "scene_changed"
EVENT_PLAY_ERROR = "play_error"
RESERVED_REQUEST_KEYS = frozenset({"id", "method"})


class _Incoming(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class RpcResponse(_Incoming):
    """The addon's answer to one request, matched by `id`."""

    id: str
    ok: StrictBool
    result: JsonValue = None
    error: str | None = None


class EditorReady(_Incoming):
    """The handshake: the first message an addon sends after connecting."""

    type: Literal["editor_ready"]
    token: str | None = None
    godot_version: str = Field(default="", alias="godotVersion")
    project_path: str = Field(default="", alias="projectPath")
    addon_version: str = Field(default="", alias="addonVersion")


class SceneChanged(_Incoming):
    """The editor switched its edited scene."""

    type: Literal["scene_changed"]
    path: str = ""


class PlayError(_Incoming):
    """An error or warning captured from the running game."""

    type: Literal["play_error"]
    severity: Literal["error", "warning"] = "error"
    message: str


EditorEvent: TypeAlias = EditorReady | SceneChanged | PlayError
Incoming: TypeAlias = RpcResponse | EditorEvent


class MalformedMessageError(ValueError):
    """A line that is not a message the bridge understands; the text says why."""


_EVENT_MODELS: dict[str, type[EditorReady | SceneChanged | PlayError]] = {
    EVENT_EDITOR_READY: EditorReady,
    EVENT_SCENE_CHANGED: SceneChanged,
    EVENT_PLAY_ERROR: PlayError,
}


def parse_incoming(line: bytes) -> Incoming:
    """Classify one line: a response when it has an `id` and no `method`, else an event."""
    try:
        data: object = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedMessageError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise MalformedMessageError("a message must be a JSON object")
    obj: dict[str, object] = data  # pyright: ignore[reportUnknownVariableType]
    try:
        if "method" in obj:
            raise MalformedMessageError("the editor sent a request; only the bridge sends requests")
        if "id" in obj:
            return RpcResponse.model_validate(obj)
        kind = obj.get("type")
        model = _EVENT_MODELS.get(kind) if isinstance(kind, str) else None
        if model is None:
            raise MalformedMessageError(f"unknown event type {kind!r}")
        return model.model_validate(obj)
    except ValidationError as exc:
        raise MalformedMessageError(_first_error(exc)) from None


def encode_request(request_id: str, method: str, params: Mapping[str, object]) -> bytes:
    """One request line; params are flat top-level keys next to `id` and `method`."""
    body = {"id": request_id, "method": method, **params}
    return (json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def encode_message(message: Mapping[str, object]) -> bytes:
    """Any JSON object as one wire line."""
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "message"
    return f"{where}: {error['msg']}"
