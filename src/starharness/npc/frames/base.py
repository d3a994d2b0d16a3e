"""The common base of every frame model: wire names, strictness and schema shape."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel
from pydantic.fields import ComputedFieldInfo, FieldInfo

PROTOCOL_VERSION = 1
PROTOCOL_REVISION = 3
"""Additions within version 1 that old clients may ignore: 2 added scenes of several NPCs
(`npcIds`, `to`, `speakerId`); 3 added scenes several players join (`join`, `speakerName`)."""
MAX_SCENE_NPCS = 4
"""The most NPCs one encounter (a scene) may hold."""


def _field_title(name: str, _info: FieldInfo | ComputedFieldInfo) -> str:
    return to_camel(name)


def _constants_are_required(schema: dict[str, Any]) -> None:
    # `t` and `protocol` have Python defaults so callers need not repeat them,
    # but they are always on the wire, so engine clients may rely on them.
    properties: dict[str, dict[str, Any]] = schema.get("properties", {})
    constants = [name for name, prop in properties.items() if "const" in prop]
    for name in constants:
        properties[name].pop("default", None)
    required: list[str] = [name for name in schema.get("required", []) if name not in constants]
    schema["required"] = [*constants, *required]


class WireModel(BaseModel):
    """A JSON object on the wire: Python names are snake_case, wire names camelCase."""

    model_config = ConfigDict(
        extra="ignore",
        frozen=True,
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=True,
        serialize_by_alias=True,
        field_title_generator=_field_title,
        json_schema_extra=_constants_are_required,
    )


class Frame(WireModel):
    """A flat JSON object whose `t` names its type."""


def omit_none(value: object) -> bool:
    """`exclude_if` predicate: an optional field that is unset is left out of the frame."""
    return value is None


def optional_string_schema(schema: dict[str, Any]) -> None:
    """Describe an omitted-when-unset string as a plain optional string, not a nullable one."""
    branches: list[dict[str, Any]] = schema.pop("anyOf", [])
    for branch in branches:
        if branch.get("type") != "null":
            schema.update(branch)
    schema.pop("default", None)
