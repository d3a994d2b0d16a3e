"""Tool-level rules: hygiene limits, clamps, res:// paths, the deny list, result caps."""

from __future__ import annotations

from pathlib import Path

import pytest
from godot_support import ConnectEditor
from pydantic import JsonValue

from starharness.godot import (
    GODOT_TOOLS,
    METHOD_TOOL,
    MUTATING_TOOLS,
    GodotBridge,
    GodotError,
    GodotErrorCode,
    enabled_specs,
    tool_spec,
)
from starharness.godot.testing import FakeBehaviour
from starharness.godot.tools import RESULT_CHAR_CAP, render_result


def test_the_catalogue_has_27_tools_mapped_to_the_wire() -> None:
    assert len(GODOT_TOOLS) == 27
    assert {(spec.method, spec.name) for spec in GODOT_TOOLS} == set(METHOD_TOOL.items())
    assert {spec.name for spec in GODOT_TOOLS if spec.mutating} == MUTATING_TOOLS
    assert len(MUTATING_TOOLS) == 9
    irregular = {
        spec.method: spec.name for spec in GODOT_TOOLS if spec.name != f"godot_{spec.method}"
    }
    assert irregular == {
        "get_editor_info": "godot_editor_info",
        "get_open_scenes": "godot_open_scenes",
        "get_edited_scene": "godot_edited_scene",
        "run_current_scene": "godot_run_scene",
        "play_main_scene": "godot_run_main_scene",
        "get_play_errors": "godot_play_errors",
    }


def test_schemas_are_shared_and_describe_the_limits() -> None:
    spec = tool_spec("godot_get_scene_tree")
    assert spec is not None
    schema = spec.json_schema()
    properties = schema["properties"]
    assert isinstance(properties, dict)

    assert spec.json_schema() is schema
    assert properties["max_depth"] == {
        "default": 8,
        "description": properties["max_depth"]["description"],
        "maximum": 16,
        "minimum": 1,
        "title": "Max Depth",
        "type": "integer",
    }
    assert schema.get("additionalProperties") is False
    assert [s.name for s in enabled_specs({"godot_stop_scene", "godot_editor_info"})] == [
        "godot_editor_info",
        "godot_stop_scene",
    ]


@pytest.mark.parametrize(
    ("tool", "given", "wire_key", "expected"),
    [
        ("godot_get_scene_tree", {"max_depth": 40}, "max_depth", 16),
        ("godot_get_scene_tree", {"max_depth": 0}, "max_depth", 1),
        ("godot_get_scene_tree", {"max_depth": 3.9}, "max_depth", 3),
        ("godot_list_project_files", {"limit": 0}, "limit", 1),
        ("godot_list_project_files", {"limit": 99_999}, "limit", 5_000),
        ("godot_run_scene", {"wait_ms": 60_000}, "wait_ms", 15_000),
        ("godot_run_scene", {"wait_ms": -5}, "wait_ms", 0),
        ("godot_run_main_scene", {"wait_ms": None}, "wait_ms", 3_000),
        (
            "godot_wait_for_import_done",
            {"paths": ["a.png"], "timeout_ms": 10**9},
            "timeout_ms",
            60_000,
        ),
        ("godot_set_breakpoint", {"file": "a.gd", "line": -4}, "line", 1),
    ],
)
async def test_numbers_are_clamped_before_they_reach_the_editor(
    tool: str,
    given: dict[str, JsonValue],
    wire_key: str,
    expected: int,
    bridge: GodotBridge,
    connect_editor: ConnectEditor,
    project: Path,
) -> None:
    fake = await connect_editor(bridge, project)

    outcome = await bridge.call_tool(tool, given)

    assert outcome.ok, outcome.text
    assert fake.requests[-1][wire_key] == expected


@pytest.mark.parametrize(
    ("tool", "given", "problem"),
    [
        ("godot_open_scene", {"path": "/etc/passwd"}, "must be res:// relative"),
        ("godot_open_scene", {"path": "C:\\game\\main.tscn"}, "must be res:// relative"),
        ("godot_open_scene", {"path": "res://../secrets.tscn"}, "'..' is not allowed"),
        ("godot_open_scene", {"path": "user://save.tscn"}, "must be a res:// path"),
        ("godot_open_scene", {"path": "res://"}, "a file path is required"),
        ("godot_open_scene", {}, "path: Field required"),
        ("godot_wait_for_import_done", {"paths": []}, "paths: List should have at least 1 item"),
        ("godot_wait_for_import_done", {"paths": ["\\abs\\a.png"]}, "must be res:// relative"),
        ("godot_lint_scripts", {"paths": [f"s{n}.gd" for n in range(513)]}, "at most 512 items"),
        ("godot_open_scene", {"path": "a" * 4_097}, "at most 4096 characters"),
        ("godot_list_project_files", {"pattern": "*" * 4_097}, "pattern: String should have"),
        ("godot_list_project_files", {"type": "movie"}, "type: Input should be"),
        ("godot_list_project_files", {"cursor": "500"}, "cursor: String should match"),
        ("godot_resolve_uid", {}, "exactly one of uid or path"),
        ("godot_resolve_uid", {"uid": "uid://abc", "path": "a.tscn"}, "exactly one of uid or path"),
        ("godot_resolve_uid", {"uid": "res://a.tscn"}, "uid: String should match"),
        ("godot_stop_scene", {"force": True}, "force: unknown parameter"),
        ("godot_export_project", {"preset": "  ", "output_dir": "build"}, "preset: String should"),
        ("godot_get_node_properties", {"node_path": ""}, "node_path: String should"),
    ],
)
async def test_bad_parameters_are_refused_naming_the_parameter(
    tool: str,
    given: dict[str, JsonValue],
    problem: str,
    bridge: GodotBridge,
    connect_editor: ConnectEditor,
    project: Path,
) -> None:
    fake = await connect_editor(bridge, project)

    outcome = await bridge.call_tool(tool, given)

    assert outcome.error_code is GodotErrorCode.INVALID_PARAMS
    assert outcome.text.startswith(f"Error: invalid parameters for {tool}: ")
    assert problem in outcome.text
    assert fake.requests == []


@pytest.mark.parametrize(
    ("key", "rule"),
    [
        ("autoload/Cheat", "'autoload/'"),
        ("Autoload/Cheat", "'autoload/'"),
        ("autoload", "'autoload/'"),
        ("input/ui_accept", "'input/'"),
        ("editor_plugins/enabled", "'editor_plugins/enabled'"),
        ("debug/file_logging/enable_file_logging", "'debug/file_logging/'"),
        ("debug/settings/stdout/verbose_stdout", "'debug/settings/stdout/verbose_stdout'"),
        ("debug/settings/stdout/print_fps", "'debug/settings/stdout/print_fps'"),
        ("debug/gdscript/warnings/unused_variable", "'debug/gdscript/warnings/'"),
        ("debug/shapes/collision/shape_color", "'debug/shapes/'"),
        ("debug/colors/x", "'debug/colors/'"),
        ("network/tls/certificate_bundle_override", "'network/tls/certificate_bundle_override'"),
        ("project_settings_override/x", "'project_settings_override/'"),
    ],
)
async def test_protected_settings_are_refused_by_the_tool_and_the_bridge(
    key: str, rule: str, bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    fake = await connect_editor(bridge, project)

    outcome = await bridge.call_tool("godot_set_project_setting", {"key": key, "value": 1})
    with pytest.raises(GodotError) as direct:
        await bridge.call("set_project_setting", {"key": key, "value": 1})

    assert outcome.error_code is GodotErrorCode.INVALID_PARAMS
    assert f"deny rule {rule}" in outcome.text
    assert direct.value.code is GodotErrorCode.INVALID_PARAMS and rule in direct.value.message
    assert fake.requests == []


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("application/config/name", None, "must not be null"),
        ("application/config/name", [[[1]]], "deeper than 2 levels"),
        ("application/config/name", list(range(65)), "at most 64"),
        ("application/config/name", {"a": None}, "must not be null"),
        ("1application", "x", "must start with a letter"),
        ("application/config/", "x", "end with a letter or digit"),
        ("application config", "x", "contain only letters"),
        ("a" * 257, "x", "at most 256"),
    ],
)
async def test_setting_keys_and_values_follow_the_rules(
    key: str,
    value: JsonValue,
    problem: str,
    bridge: GodotBridge,
    connect_editor: ConnectEditor,
    project: Path,
) -> None:
    fake = await connect_editor(bridge, project)

    outcome = await bridge.call_tool("godot_set_project_setting", {"key": key, "value": value})

    assert outcome.error_code is GodotErrorCode.INVALID_PARAMS
    assert problem in outcome.text
    assert fake.requests == []


async def test_allowed_settings_pass_with_nested_values(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    fake = await connect_editor(bridge, project)
    value: JsonValue = {"size": [1280, 720], "title": "Game"}

    outcome = await bridge.call_tool("godot_set_project_setting", {"key": "a", "value": value})

    assert outcome.ok, outcome.text
    assert fake.requests[-1]["value"] == value


async def test_the_bridge_checks_hygiene_for_direct_calls_too(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    fake = await connect_editor(bridge, project)

    with pytest.raises(GodotError) as long_string:
        await bridge.call("open_scene", {"path": "x" * 4_097})
    with pytest.raises(GodotError) as long_array:
        await bridge.call("lint_scripts", {"paths": ["res://a.gd"] * 513})
    ok = await bridge.call("lint_scripts", {"paths": ["res://a.gd"] * 512})

    assert "path: string of 4097 characters exceeds 4096" in long_string.value.message
    assert "paths: array of 513 items exceeds 512" in long_array.value.message
    assert ok.result is not None and len(fake.requests) == 1


async def test_long_results_are_capped_with_a_marker(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    big: JsonValue = {
        "files": [{"path": f"res://f{n}.tscn", "type": "scene"} for n in range(8_000)]
    }
    await connect_editor(
        bridge, project, behaviour=FakeBehaviour(results={"list_project_files": big})
    )

    outcome = await bridge.call_tool("godot_list_project_files", {})

    assert outcome.ok and outcome.truncated
    assert len(outcome.text) <= RESULT_CHAR_CAP
    assert "…[truncated: the result had" in outcome.text
    assert outcome.result == big


def test_short_results_are_rendered_whole() -> None:
    text, truncated = render_result({"pong": True})
    assert (text, truncated) == ('{\n "pong": true\n}', False)
    capped, cut = render_result("y" * 500, cap=300)
    assert cut and len(capped) == 300 and capped.startswith('"yyy')


async def test_unknown_tools_are_named(bridge: GodotBridge) -> None:
    outcome = await bridge.call_tool("godot_eval", {"code": "1"})

    assert outcome.error_code is GodotErrorCode.UNKNOWN_TOOL
    assert "godot_eval" in outcome.text and "godot_editor_info" in outcome.text


async def test_unknown_enabled_tool_names_are_rejected(bridge: GodotBridge) -> None:
    with pytest.raises(ValueError, match="godot_eval"):
        bridge.set_enabled_tools(["godot_eval", "godot_stop_scene"])
    assert len(bridge.enabled_tools) == 27


async def test_failures_can_be_raised_for_exception_style_callers(bridge: GodotBridge) -> None:
    bridge.set_enabled_tools([])
    outcome = await bridge.call_tool("godot_stop_scene")

    assert outcome.mutating
    with pytest.raises(GodotError) as raised:
        outcome.raise_for_error()
    assert raised.value.code is GodotErrorCode.TOOL_DISABLED
