"""Turning raw frame text into models, with errors that name what is wrong."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

from .errors import ErrorCode, FrameError
from .up import UP_FRAME_TYPES, UpFrame

_UP_ADAPTER: Final[TypeAdapter[UpFrame]] = TypeAdapter(UpFrame)
_UP_TAGS: Final = tuple(str(model.model_fields["t"].default) for model in UP_FRAME_TYPES)
_MAX_LISTED_PROBLEMS: Final = 3


def parse_up_frame(raw: str | bytes) -> UpFrame:
    """Parse one frame from an engine, or raise `FrameError(bad_frame)` saying what is wrong."""
    try:
        return _UP_ADAPTER.validate_json(raw, strict=True, by_alias=True, by_name=False)
    except ValidationError as exc:
        raise invalid_frame_error(raw, exc, _UP_TAGS) from None


def invalid_frame_error(raw: str | bytes, exc: ValidationError, tags: Sequence[str]) -> FrameError:
    """Build the `bad_frame` error for a frame that failed validation against `tags`' models."""
    return FrameError(ErrorCode.BAD_FRAME, _describe(raw, exc.errors(), tags), _encounter_id(raw))


def _describe(raw: str | bytes, errors: list[ErrorDetails], tags: Sequence[str]) -> str:
    first = errors[0]
    kind = first["type"]
    if kind == "json_invalid":
        if isinstance(raw, bytes) and not _is_utf8(raw):
            return "frame is not valid UTF-8 text"
        reason = first.get("ctx", {}).get("error", first["msg"])
        return f"frame is not valid JSON ({reason})"
    if kind in ("dict_type", "model_attributes_type", "model_type") and not first["loc"]:
        return f"frame must be a JSON object, got {_json_kind(first['input'])}"
    if kind == "union_tag_not_found":
        return "frame has no 't' field naming its type"
    if kind == "union_tag_invalid":
        tag = _input_tag(first["input"])
        if not isinstance(tag, str):
            return f"field 't' must be a string naming the frame type, got {_json_kind(tag)}"
        return f"unknown frame type 't': {tag!r}; expected one of {', '.join(tags)}"
    problems = [_describe_field(error) for error in errors[:_MAX_LISTED_PROBLEMS]]
    if len(errors) > _MAX_LISTED_PROBLEMS:
        problems.append(f"and {len(errors) - _MAX_LISTED_PROBLEMS} more")
    return "; ".join(problems)


def _describe_field(error: ErrorDetails) -> str:
    tag, *path = error["loc"]
    message = error["msg"].removeprefix("Value error, ")
    if not path:
        return f"{tag}: {message}"
    where = _path_text(path)
    if error["type"] == "missing":
        return f"{tag}: field '{where}' is required"
    return f"{tag}: field '{where}': {message}"


def _path_text(path: Sequence[int | str]) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def _input_tag(value: object) -> object:
    if isinstance(value, dict):
        mapping: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return mapping.get("t")
    return None


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _encounter_id(raw: str | bytes) -> str | None:
    # Only runs for refused frames, so parsing twice costs nothing on the normal path.
    try:
        value: object = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict):
        mapping: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        encounter_id = mapping.get("id")
        if isinstance(encounter_id, str) and encounter_id:
            return encounter_id
    return None
