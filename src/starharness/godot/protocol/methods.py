"""The wire allow-list: 27 editor methods plus `ping`, and the tool that gates each one."""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

PING: Final = "ping"

# Method -> the `godot_*` tool that must be enabled before the bridge sends it. The irregular
# names (run_current_scene -> godot_run_scene, ...) are part of the wire contract.
METHOD_TOOL: Final = MappingProxyType(
    {
        "get_editor_info": "godot_editor_info",
        "get_open_scenes": "godot_open_scenes",
        "get_edited_scene": "godot_edited_scene",
        "open_scene": "godot_open_scene",
        "reload_scene": "godot_reload_scene",
        "get_scene_tree": "godot_get_scene_tree",
        "get_node_properties": "godot_get_node_properties",
        "run_current_scene": "godot_run_scene",
        "play_main_scene": "godot_run_main_scene",
        "import_resources": "godot_import_resources",
        "get_play_errors": "godot_play_errors",
        "stop_scene": "godot_stop_scene",
        "get_debugger_state": "godot_get_debugger_state",
        "set_breakpoint": "godot_set_breakpoint",
        "find_unused_resources": "godot_find_unused_resources",
        "export_project": "godot_export_project",
        "get_project_setting": "godot_get_project_setting",
        "set_project_setting": "godot_set_project_setting",
        "lint_scripts": "godot_lint_scripts",
        "list_project_files": "godot_list_project_files",
        "resolve_uid": "godot_resolve_uid",
        "wait_for_import_done": "godot_wait_for_import_done",
        "list_global_classes": "godot_list_global_classes",
        "find_class_name_conflicts": "godot_find_class_name_conflicts",
        "inspect_script": "godot_inspect_script",
        "list_export_presets": "godot_list_export_presets",
        "check_export_templates": "godot_check_export_templates",
    }
)

TOOL_METHOD: Final = MappingProxyType({tool: method for method, tool in METHOD_TOOL.items()})

EDITOR_METHODS: Final = frozenset(METHOD_TOOL)
ALLOWED_METHODS: Final = EDITOR_METHODS | {PING}
TOOL_NAMES: Final = frozenset(TOOL_METHOD)

# Tools that change the editor, the project or the running game (an undo-worthy action).
MUTATING_TOOLS: Final = frozenset(
    {
        "godot_open_scene",
        "godot_reload_scene",
        "godot_run_scene",
        "godot_run_main_scene",
        "godot_import_resources",
        "godot_stop_scene",
        "godot_set_breakpoint",
        "godot_export_project",
        "godot_set_project_setting",
    }
)


def gate_tool(method: str) -> str | None:
    """The tool that gates `method`, or None for the ungated `ping`."""
    return METHOD_TOOL.get(method)


def is_allowed_method(method: str) -> bool:
    """True when `method` is on the wire allow-list."""
    return method in ALLOWED_METHODS
