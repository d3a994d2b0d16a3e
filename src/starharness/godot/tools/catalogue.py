"""The 27 godot_* tools as data: name, wire method, description, parameters, mutating."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Final

from ..protocol.methods import MUTATING_TOOLS, TOOL_METHOD
from . import params as p


@dataclass(frozen=True, slots=True)
class GodotToolSpec:
    """One model-facing tool; wrap it by exposing `name`, `description` and `json_schema()`."""

    name: str
    method: str
    description: str
    params: type[p.ToolParams]
    mutating: bool

    def json_schema(self) -> dict[str, object]:
        """The parameters' JSON Schema; shared and byte-stable, so do not mutate it."""
        return _schema(self.params)


@cache
def _schema(model: type[p.ToolParams]) -> dict[str, object]:
    return model.model_json_schema()


_DESCRIPTIONS: Final[dict[str, tuple[str, type[p.ToolParams]]]] = {
    "godot_editor_info": (
        "Godot version, project path, edited scene and whether a scene is playing.",
        p.NoParams,
    ),
    "godot_open_scenes": ("Paths of the scenes open in editor tabs.", p.NoParams),
    "godot_edited_scene": (
        "The scene being edited, whether a scene plays and which one.",
        p.NoParams,
    ),
    "godot_open_scene": (
        "Open a scene file in the editor (or switch to its tab).",
        p.ScenePathParams,
    ),
    "godot_reload_scene": (
        "Reload a scene from disk, discarding unsaved editor changes; opens it first if needed.",
        p.ScenePathParams,
    ),
    "godot_get_scene_tree": (
        "Node tree (name, type, script, children) of a scene or of the edited scene; "
        "max_depth 1..16, at most 5000 nodes, then `truncated` is true.",
        p.SceneTreeParams,
    ),
    "godot_get_node_properties": (
        "Stored and script properties of one node with their type and hint.",
        p.NodePropertiesParams,
    ),
    "godot_run_scene": (
        "Play the edited scene and return the play errors seen within wait_ms (max 15 s). "
        "Play keeps running: call godot_stop_scene when done.",
        p.RunSceneParams,
    ),
    "godot_run_main_scene": (
        "Play the project's main scene and return the play errors seen within wait_ms "
        "(max 15 s). Play keeps running: call godot_stop_scene when done.",
        p.RunSceneParams,
    ),
    "godot_import_resources": (
        "Re-import the given files, or rescan the whole project when paths is empty.",
        p.ImportResourcesParams,
    ),
    "godot_play_errors": (
        "Errors and warnings captured from the running game (newest 50), optionally clearing them.",
        p.PlayErrorsParams,
    ),
    "godot_stop_scene": ("Stop the playing scene.", p.NoParams),
    "godot_get_debugger_state": (
        "Debugger sessions (active, paused at a break, debuggable), break count, pending "
        "breakpoints and the play-error buffer.",
        p.NoParams,
    ),
    "godot_set_breakpoint": (
        "Set or remove a line breakpoint in a script; applied to running and future sessions.",
        p.BreakpointParams,
    ),
    "godot_find_unused_resources": (
        "Scenes, resources, scripts and shaders under root that nothing refers to "
        "(class_name scripts and addons/ excluded).",
        p.UnusedResourcesParams,
    ),
    "godot_export_project": (
        "Export the project with a preset into output_dir (headless subprocess, up to 300 s).",
        p.ExportParams,
    ),
    "godot_get_project_setting": (
        "Read one project setting; `exists` tells whether it is set.",
        p.GetSettingParams,
    ),
    "godot_set_project_setting": (
        "Write one project setting and save project.godot. Protected keys (autoload/, input/, "
        "editor_plugins/, debug output and TLS overrides) are refused.",
        p.SetSettingParams,
    ),
    "godot_lint_scripts": (
        "Parse-check GDScript files; returns issues with line and message per file.",
        p.LintParams,
    ),
    "godot_list_project_files": (
        "List project files with kind and uid, filtered by kind or glob; paged by limit "
        "(1..5000) and cursor.",
        p.ListFilesParams,
    ),
    "godot_resolve_uid": (
        "Translate a uid:// identifier to its res:// path or back; give exactly one.",
        p.ResolveUidParams,
    ),
    "godot_wait_for_import_done": (
        "Wait until the given files are imported (timeout_ms up to 60 s); lists what remains.",
        p.WaitImportParams,
    ),
    "godot_list_global_classes": ("Every class_name class of the project.", p.NoParams),
    "godot_find_class_name_conflicts": (
        "class_name declared twice, or clashing with an engine class.",
        p.ClassConflictParams,
    ),
    "godot_inspect_script": (
        "A script's base, signals, methods, properties and constants.",
        p.ScriptPathParams,
    ),
    "godot_list_export_presets": ("Export presets from export_presets.cfg.", p.NoParams),
    "godot_check_export_templates": (
        "Whether export templates for this Godot version are installed, and for which "
        "preset platforms they are missing.",
        p.NoParams,
    ),
}

GODOT_TOOLS: Final = tuple(
    GodotToolSpec(
        name=name,
        method=TOOL_METHOD[name],
        description=description,
        params=model,
        mutating=name in MUTATING_TOOLS,
    )
    for name, (description, model) in _DESCRIPTIONS.items()
)

TOOLS_BY_NAME: Final = MappingProxyType({spec.name: spec for spec in GODOT_TOOLS})


def tool_spec(name: str) -> GodotToolSpec | None:
    """The spec of a godot_* tool, or None."""
    return TOOLS_BY_NAME.get(name)


def enabled_specs(enabled: frozenset[str] | set[str]) -> list[GodotToolSpec]:
    """The specs to register for a set of enabled names, in catalogue order."""
    return [spec for spec in GODOT_TOOLS if spec.name in enabled]
