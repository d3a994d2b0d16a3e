"""Parameter models of the 27 godot_* tools: bounded, clamped and shaped for the wire."""

from __future__ import annotations

import math
from typing import Annotated, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    StringConstraints,
    WithJsonSchema,
    model_validator,
)

from ..protocol import ladder
from ..protocol.hygiene import MAX_ARRAY_ITEMS, MAX_STRING_CHARS
from ..protocol.settings_rules import (
    MAX_KEY_CHARS,
    check_setting_value,
    check_writable_key,
    normalize_setting_key,
)
from .paths import ResFolder, ResPath

Text = Annotated[str, StringConstraints(max_length=MAX_STRING_CHARS)]
NonEmptyText = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_STRING_CHARS, strip_whitespace=True)
]
PathList = Annotated[list[ResPath], Field(max_length=MAX_ARRAY_ITEMS)]
NonEmptyPathList = Annotated[list[ResPath], Field(min_length=1, max_length=MAX_ARRAY_ITEMS)]
FileKind = Literal["scene", "script", "shader", "resource", "texture", "audio", "other"]


def _floor_line(value: object) -> object:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return max(1, math.floor(value))
    return value


# The constraint comes first so the schema shows minimum/maximum; the clamp runs before it.
SceneDepth = Annotated[
    int,
    Field(ge=ladder.SCENE_TREE_MIN_DEPTH, le=ladder.SCENE_TREE_MAX_DEPTH),
    BeforeValidator(ladder.clamp_scene_tree_depth),
]
RunWaitMs = Annotated[
    int, Field(ge=0, le=ladder.RUN_WAIT_MAX_MS), BeforeValidator(ladder.clamp_run_wait_ms)
]
ImportWaitMs = Annotated[
    int, Field(ge=0, le=ladder.IMPORT_WAIT_MAX_MS), BeforeValidator(ladder.clamp_import_wait_ms)
]
ListLimit = Annotated[
    int,
    Field(ge=ladder.LIST_MIN_LIMIT, le=ladder.LIST_MAX_LIMIT),
    BeforeValidator(ladder.clamp_list_limit),
]
LineNumber = Annotated[int, Field(ge=1), BeforeValidator(_floor_line)]
SettingKey = Annotated[
    str, StringConstraints(max_length=MAX_KEY_CHARS + 64), AfterValidator(normalize_setting_key)
]
WritableSettingKey = Annotated[
    str, StringConstraints(max_length=MAX_KEY_CHARS + 64), AfterValidator(check_writable_key)
]


def _checked_value(value: JsonValue) -> JsonValue:
    check_setting_value(value)
    return value


SettingValue = Annotated[
    JsonValue,
    AfterValidator(_checked_value),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string"},
                {"type": "number"},
                {"type": "boolean"},
                {"type": "array"},
                {"type": "object"},
            ]
        }
    ),
]


class ToolParams(BaseModel):
    """Base of every tool's parameters: unknown keys are refused, not ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_wire(self) -> dict[str, object]:
        """The flat request parameters, with unset optional ones left out."""
        return self.model_dump(mode="json", exclude_none=True)


class NoParams(ToolParams):
    """The tool takes no parameters."""


class ScenePathParams(ToolParams):
    """A scene file."""

    path: ResPath = Field(description="Scene path, e.g. res://levels/main.tscn")


class SceneTreeParams(ToolParams):
    """Scene tree of a scene file, or of the edited scene when `path` is omitted."""

    path: ResPath | None = Field(
        default=None, description="Scene path; omit for the scene open in the editor"
    )
    max_depth: SceneDepth = Field(
        default=ladder.SCENE_TREE_DEFAULT_DEPTH,
        description="Levels below the root to include (clamped to 1..16; at most 5000 nodes)",
    )


class NodePropertiesParams(ToolParams):
    """Properties of one node."""

    path: ResPath | None = Field(
        default=None, description="Scene path; omit for the scene open in the editor"
    )
    node_path: NonEmptyText = Field(description="Node path from the scene root, '.' for the root")


class RunSceneParams(ToolParams):
    """Start playing and collect the first play errors."""

    wait_ms: RunWaitMs = Field(
        default=ladder.RUN_WAIT_DEFAULT_MS,
        description="How long to collect early play errors before answering (0..15000 ms)",
    )


class ImportResourcesParams(ToolParams):
    """Re-import files, or rescan the whole project when `paths` is empty."""

    paths: PathList = Field(
        default_factory=list[str], description="Files to re-import; empty rescans the project"
    )


class PlayErrorsParams(ToolParams):
    """Errors captured from the running game."""

    clear: bool = Field(default=False, description="Empty the error buffer after reading it")


class BreakpointParams(ToolParams):
    """Set or remove a line breakpoint."""

    file: ResPath = Field(description="Script path, e.g. res://player.gd")
    line: LineNumber = Field(description="1-based line number")
    condition: Text | None = Field(
        default=None, description="Ignored: Godot 4 breakpoints have no conditions"
    )
    remove: bool = Field(default=False, description="Remove the breakpoint instead of adding it")


class UnusedResourcesParams(ToolParams):
    """Scan for resources nothing refers to."""

    root: ResFolder = Field(default="res://", description="Folder to scan")


class ExportParams(ToolParams):
    """Export with a preset from export_presets.cfg."""

    preset: Annotated[
        str, StringConstraints(min_length=1, max_length=256, strip_whitespace=True)
    ] = Field(description="Export preset name as shown in Project > Export")
    output_dir: ResPath = Field(description="Output folder inside the project, e.g. res://build")
    debug: bool = Field(default=False, description="Debug export instead of release")


class GetSettingParams(ToolParams):
    """Read one project setting."""

    key: SettingKey = Field(description="Setting key, e.g. application/config/name")


class SetSettingParams(ToolParams):
    """Write one project setting and save project.godot."""

    key: WritableSettingKey = Field(
        description="Setting key; autoload/, input/, editor_plugins/ and debug keys are protected"
    )
    value: SettingValue = Field(
        description="String, number, boolean, or a small array/object of them (no null)"
    )


class LintParams(ToolParams):
    """Parse-check GDScript files."""

    paths: NonEmptyPathList = Field(description="Script paths to check")


class ListFilesParams(ToolParams):
    """List project files, paged."""

    root: ResFolder = Field(default="res://", description="Folder to list")
    type: FileKind | None = Field(default=None, description="Only files of this kind")
    pattern: Text | None = Field(default=None, description="Glob on the path, e.g. *.tscn")
    limit: ListLimit = Field(
        default=ladder.LIST_DEFAULT_LIMIT, description="Page size (clamped to 1..5000)"
    )
    cursor: Annotated[str, StringConstraints(pattern=r"^#\d{1,9}$")] | None = Field(
        default=None, description="nextCursor of the previous page, e.g. #500"
    )


class ResolveUidParams(ToolParams):
    """Translate between uid:// and res:// (exactly one of them)."""

    uid: Annotated[str, StringConstraints(pattern=r"^uid://[0-9a-z]{1,64}$")] | None = Field(
        default=None, description="A uid://... identifier"
    )
    path: ResPath | None = Field(default=None, description="A res:// path")

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        if (self.uid is None) == (self.path is None):
            raise ValueError("give exactly one of uid or path")
        return self


class WaitImportParams(ToolParams):
    """Wait until files are imported."""

    paths: NonEmptyPathList = Field(description="Files to wait for (res:// relative)")
    timeout_ms: ImportWaitMs = Field(
        default=ladder.IMPORT_WAIT_DEFAULT_MS, description="How long to wait (0..60000 ms)"
    )


class ClassConflictParams(ToolParams):
    """Find class_name clashes."""

    include_addons: bool = Field(default=False, description="Also scan res://addons/")


class ScriptPathParams(ToolParams):
    """A script file."""

    path: ResPath = Field(description="Script path, e.g. res://player.gd")
