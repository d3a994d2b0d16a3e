"""Drive a real Godot editor through the bridge: every godot_* tool once, results printed.

Run from the repository root, then open docs/godot-smoke-test in Godot (addon installed):

    uv run python docs/godot-smoke-test/drive.py [--export PRESET] [--pause]
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from pydantic import JsonValue

from starharness.godot import TOOL_NAMES, BridgeSettings, GodotBridge

PROJECT = Path(__file__).resolve().parent

# (tool, parameters, what a working editor shows)
STEPS: list[tuple[str, dict[str, JsonValue], str]] = [
    ("godot_editor_info", {}, "godotVersion 4.3+, projectPath = this folder"),
    ("godot_list_project_files", {"type": "scene"}, "main.tscn and crash.tscn with uids"),
    ("godot_open_scene", {"path": "main.tscn"}, "main.tscn opens in the editor"),
    ("godot_open_scenes", {}, "res://main.tscn listed"),
    ("godot_edited_scene", {}, "path res://main.tscn, playing false"),
    ("godot_get_scene_tree", {"max_depth": 2}, "Main > Label, Player > Sprite"),
    ("godot_get_node_properties", {"node_path": "Player"}, "position (64, 64)"),
    ("godot_inspect_script", {"path": "main.gd"}, "base Node2D, property speed, method _ready"),
    ("godot_list_global_classes", {}, "PlayerStats"),
    ("godot_find_class_name_conflicts", {}, "count 0"),
    ("godot_get_project_setting", {"key": "application/config/name"}, "Agent RPC Smoke Test"),
    ("godot_set_project_setting", {"key": "smoke_test/last_run", "value": 1}, "saved true"),
    ("godot_set_project_setting", {"key": "autoload/Evil", "value": "*res://x.gd"}, "refused"),
    (
        "godot_lint_scripts",
        {"paths": ["main.gd", "uses_autoload.gd", "lint_samples/broken.gd"]},
        "first two ok, broken.gd has an error on line 6",
    ),
    ("godot_resolve_uid", {"path": "main.tscn"}, "a uid://... and exists true"),
    ("godot_import_resources", {"paths": ["icon.svg"]}, "reimported icon.svg"),
    ("godot_wait_for_import_done", {"paths": ["icon.svg"], "timeout_ms": 10000}, "ok true"),
    ("godot_find_unused_resources", {}, "unused_stats.tres, crash.tscn, uses_autoload.gd"),
    ("godot_set_breakpoint", {"file": "crash.gd", "line": 7}, "enabled true"),
    ("godot_set_breakpoint", {"file": "crash.gd", "line": 7, "remove": True}, "enabled false"),
    ("godot_run_scene", {"wait_ms": 3000}, "errors: SMOKE_WARNING and SMOKE_ERROR"),
    ("godot_play_errors", {}, "the same two entries, playing true"),
    ("godot_get_debugger_state", {}, "one active session, hookedDebuggers >= 1"),
    ("godot_stop_scene", {}, "stopped true, wasPlaying true"),
    ("godot_open_scene", {"path": "crash.tscn"}, "crash.tscn opens"),
    ("godot_run_scene", {"wait_ms": 3000}, "an error 'Debugger break: ...null instance...'"),
    ("godot_stop_scene", {}, "stopped true (play was paused in the debugger)"),
    ("godot_run_main_scene", {"wait_ms": 1000}, "playMethod play_main_scene"),
    ("godot_stop_scene", {}, "stopped true"),
    ("godot_reload_scene", {"path": "main.tscn"}, "reloaded res://main.tscn"),
    ("godot_list_export_presets", {}, "presets you added in Project > Export, or missing true"),
    ("godot_check_export_templates", {}, "installed and missingPlatforms for your presets"),
]


async def drive(export_preset: str | None, pause: bool) -> None:
    """Start a bridge for this project, wait for the editor, run every step."""
    settings = BridgeSettings(workspace=PROJECT, enabled_tools=TOOL_NAMES)
    steps = list(STEPS)
    if export_preset:
        params: dict[str, JsonValue] = {"preset": export_preset, "output_dir": "build"}
        steps.append(("godot_export_project", params, "ok true and an outputPath under build/"))
    async with GodotBridge(settings) as bridge:
        print(f"bridge on 127.0.0.1:{bridge.port}; endpoint file {settings.endpoint_file}")
        print(f"open {PROJECT} in Godot 4.3+ with addons/agent_rpc installed and enabled")
        if not await bridge.wait_for_editors(1, timeout_s=300):
            raise SystemExit(json.dumps(bridge.status().to_dict(), indent=2))
        for number, (tool, params, expected) in enumerate(steps, 1):
            outcome = await bridge.call_tool(tool, params)
            print(f"\n[{number}/{len(steps)}] {tool} {json.dumps(params)}")
            print(f"    expect: {expected}")
            print("    " + outcome.text[:1500].replace("\n", "\n    "))
            if pause:
                await asyncio.to_thread(input, "    enter for the next step ")
        print("\nstatus:", json.dumps(bridge.status().to_dict(), indent=2))


def main() -> None:
    """Parse the options and drive the editor."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--export", metavar="PRESET", help="also export with this preset")
    parser.add_argument("--pause", action="store_true", help="wait for enter after each step")
    options = parser.parse_args()
    asyncio.run(drive(options.export, options.pause))


if __name__ == "__main__":
    main()
