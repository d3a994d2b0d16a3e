"""Tool parameters: JSON Schema from pydantic models, parsing raw arguments, naming bad fields."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ValidationError
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import ErrorDetails, core_schema

from ..errors import StarHarnessError

M = TypeVar("M", bound=BaseModel)

_MAX_REPORTED_ERRORS = 8


class ToolArgsError(StarHarnessError, ValueError):
    """Raised by an argument parser; the message names the field that is wrong."""


class _ModelFacingSchema(GenerateJsonSchema):
    """Leaves out the per-field titles pydantic adds: they only cost the model tokens."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def model_schema(self, schema: core_schema.ModelSchema) -> dict[str, Any]:
        generated = super().model_schema(schema)
        generated.pop("title", None)
        return generated


def parameters_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema a model sees for `model`'s fields (no titles, no model docstring)."""
    schema = model.model_json_schema(schema_generator=_ModelFacingSchema)
    # The tool description already says what the model docstring would.
    schema.pop("description", None)
    return schema


def model_parser(model: type[M]) -> Callable[[str], M]:
    """Parse and validate raw JSON arguments in one pass; an empty string means no arguments."""
    validate = model.model_validate_json

    def parse(raw: str) -> M:
        return validate(raw or "{}")

    return parse


def describe_invalid(error: ValidationError | ToolArgsError) -> str:
    """`field 'qty': Input should be a valid integer; ...` for the fields that are wrong."""
    if isinstance(error, ToolArgsError):
        return str(error)
    details = error.errors(include_url=False, include_context=False, include_input=False)
    parts = [_describe(detail) for detail in details[:_MAX_REPORTED_ERRORS]]
    if len(details) > _MAX_REPORTED_ERRORS:
        parts.append(f"and {len(details) - _MAX_REPORTED_ERRORS} more problems")
    return "; ".join(parts)


def _describe(detail: ErrorDetails) -> str:
    location = field_path(detail["loc"])
    if detail["type"] == "json_invalid":
        return f"arguments are not valid JSON ({detail['msg']})"
    if not location:
        return detail["msg"]
    return f"field '{location}': {detail['msg']}"


def field_path(loc: Sequence[str | int]) -> str:
    """`items[0].name` for the location ('items', 0, 'name')."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else part
    return path


def copy_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A plain dict copy, so a caller keeping its own schema dict cannot change ours later."""
    return _copy(schema)


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        mapping = cast(Mapping[Any, Any], value)
        return {str(key): _copy(item) for key, item in mapping.items()}
    if isinstance(value, list | tuple):
        items = cast(Sequence[Any], value)
        return [_copy(item) for item in items]
    return value
