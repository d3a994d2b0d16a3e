"""Round trips through the bridge to a fake editor: every method, gating, failures mid-call."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from godot_support import ConnectEditor, MakeBridge
from pydantic import JsonValue

from starharness.godot import GODOT_TOOLS, METHOD_TOOL, GodotBridge, GodotError, GodotErrorCode
from starharness.godot.testing import CANNED_RESULTS, FakeBehaviour

# Valid parameters for every tool, and the flat wire parameters the editor must receive.
SAMPLES: dict[str, tuple[dict[str, JsonValue], dict[str, JsonValue]]] = {
    "godot_editor_info": ({}, {}),
    "godot_open_scenes": ({}, {}),
    "godot_edited_scene": ({}, {}),
    "godot_open_scene": ({"path": "levels/one.tscn"}, {"path": "res://levels/one.tscn"}),
    "godot_reload_scene": ({"path": "res://one.tscn"}, {"path": "res://one.tscn"}),
    "godot_get_scene_tree": (
        {"path": "res://one.tscn"},
        {"path": "res://one.tscn", "max_depth": 8},
    ),
    "godot_get_node_properties": (
        {"node_path": "Player/Sprite"},
        {"node_path": "Player/Sprite"},
    ),
    "godot_run_scene": ({"wait_ms": 500}, {"wait_ms": 500}),
    "godot_run_main_scene": ({}, {"wait_ms": 3000}),
    "godot_import_resources": ({"paths": ["icon.svg"]}, {"paths": ["res://icon.svg"]}),
    "godot_play_errors": ({"clear": True}, {"clear": True}),
    "godot_stop_scene": ({}, {}),
    "godot_get_debugger_state": ({}, {}),
    "godot_set_breakpoint": (
        {"file": "res://player.gd", "line": 12.7, "condition": "x > 1"},
        {"file": "res://player.gd", "line": 12, "condition": "x > 1", "remove": False},
    ),
    "godot_find_unused_resources": ({}, {"root": "res://"}),
    "godot_export_project": (
        {"preset": " Linux ", "output_dir": "build/linux"},
        {"preset": "Linux", "output_dir": "res://build/linux", "debug": False},
    ),
    "godot_get_project_setting": (
        {"key": " application/config/name "},
        {"key": "application/config/name"},
    ),
    "godot_set_project_setting": (
        {"key": "display/window/size/viewport_width", "value": 1280},
        {"key": "display/window/size/viewport_width", "value": 1280},
    ),
    "godot_lint_scripts": (
        {"paths": ["a.gd", "res://b.gd"]},
        {"paths": ["res://a.gd", "res://b.gd"]},
    ),
    "godot_list_project_files": (
        {"type": "scene", "pattern": "*.tscn", "cursor": "#500"},
        {"root": "res://", "type": "scene", "pattern": "*.tscn", "limit": 500, "cursor": "#500"},
    ),
    "godot_resolve_uid": ({"uid": "uid://abc123"}, {"uid": "uid://abc123"}),
    "godot_wait_for_import_done": (
        {"paths": ["icon.svg"], "timeout_ms": 1000},
        {"paths": ["res://icon.svg"], "timeout_ms": 1000},
    ),
    "godot_list_global_classes": ({}, {}),
    "godot_find_class_name_conflicts": ({"include_addons": True}, {"include_addons": True}),
    "godot_inspect_script": ({"path": "player.gd"}, {"path": "res://player.gd"}),
    "godot_list_export_presets": ({}, {}),
    "godot_check_export_templates": ({}, {}),
}


def test_samples_cover_every_tool() -> None:
    assert set(SAMPLES) == {spec.name for spec in GODOT_TOOLS}


@pytest.mark.parametrize("tool", sorted(SAMPLES))
async def test_every_tool_round_trips(
    tool: str, bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    fake = await connect_editor(bridge, project)
    given, wire = SAMPLES[tool]

    outcome = await bridge.call_tool(tool, given)

    assert outcome.ok, outcome.text
    request = fake.requests[-1]
    method = str(request.pop("method"))
    assert METHOD_TOOL[method] == tool
    request.pop("id")
    assert request == wire
    assert outcome.result == CANNED_RESULTS[method](fake, wire)
    assert outcome.client_id == "c1"
    assert outcome.routed_to is None


async def test_ping_is_ungated_and_answers(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    await connect_editor(bridge, project)
    bridge.set_enabled_tools([])

    reply = await bridge.call("ping")

    assert reply.result == {"pong": True}
    assert reply.method == "ping"


async def test_disabled_tool_is_refused_at_dispatch_and_on_the_wire(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    fake = await connect_editor(bridge, project)
    bridge.set_enabled_tools(["godot_editor_info"])

    outcome = await bridge.call_tool("godot_stop_scene", {})
    with pytest.raises(GodotError) as raised:
        await bridge.call("stop_scene")

    assert not outcome.ok
    assert outcome.error_code is GodotErrorCode.TOOL_DISABLED
    assert "godot_stop_scene" in outcome.text and "enabled_tools" in outcome.text
    assert raised.value.code is GodotErrorCode.TOOL_DISABLED
    assert fake.requests == []
    assert (await bridge.call_tool("godot_editor_info")).ok


async def test_unknown_method_is_not_sent(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    fake = await connect_editor(bridge, project)

    with pytest.raises(GodotError) as raised:
        await bridge.call("execute_editor_script", {"code": "OS.kill(1)"})

    assert raised.value.code is GodotErrorCode.METHOD_NOT_ALLOWED
    assert "method not allowed: execute_editor_script" in raised.value.message
    assert fake.requests == []


async def test_reserved_keys_cannot_be_smuggled_as_params(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    await connect_editor(bridge, project)

    with pytest.raises(GodotError) as raised:
        await bridge.call("open_scene", {"method": "set_project_setting", "path": "res://a.tscn"})

    assert raised.value.code is GodotErrorCode.INVALID_PARAMS
    assert "method" in raised.value.message


async def test_editor_refusal_is_passed_on(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    behaviour = FakeBehaviour(errors={"run_current_scene": "no edited scene"})
    await connect_editor(bridge, project, behaviour=behaviour)

    outcome = await bridge.call_tool("godot_run_scene", {})

    assert outcome.error_code is GodotErrorCode.EDITOR_ERROR
    assert outcome.text.endswith("no edited scene")
    assert bridge.status().last_errors[-1].code == "editor_error"


async def test_disconnect_mid_call_fails_the_call_at_once(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    # The ladder gives export 315 s; only the disconnect can end this call quickly.
    behaviour = FakeBehaviour(disconnect_on={"export_project"})
    await connect_editor(bridge, project, behaviour=behaviour)

    async with asyncio.timeout(5):
        outcome = await bridge.call_tool(
            "godot_export_project", {"preset": "Linux", "output_dir": "build"}
        )

    assert outcome.error_code is GodotErrorCode.DISCONNECTED
    assert "export_project" in outcome.text and "disconnected" in outcome.text
    assert bridge.status().clients == []


async def test_disconnect_fails_every_in_flight_call_of_that_editor_only(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    doomed = await connect_editor(bridge, project, behaviour=FakeBehaviour(silent={"lint_scripts"}))
    await connect_editor(bridge, project)
    bridge.set_active_client("c1")
    waiting = [
        asyncio.create_task(bridge.call("lint_scripts", {"paths": [f"res://{n}.gd"]}))
        for n in range(3)
    ]
    await doomed.wait_for_requests(3)

    await doomed.close()
    results = await asyncio.gather(*waiting, return_exceptions=True)
    survivor = await bridge.call("ping")

    assert all(isinstance(r, GodotError) and r.code is GodotErrorCode.DISCONNECTED for r in results)
    assert survivor.client_id == "c2"


async def test_stop_fails_in_flight_calls(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    fake = await connect_editor(
        bridge, project, behaviour=FakeBehaviour(silent={"get_editor_info"})
    )
    waiting = asyncio.create_task(bridge.call("get_editor_info"))
    await fake.wait_for_requests(1)

    await bridge.stop()

    with pytest.raises(GodotError) as raised:
        await waiting
    assert raised.value.code is GodotErrorCode.BRIDGE_STOPPED
    assert await fake.wait_closed_by_peer(), "stop() must close the editors' sockets"
    with pytest.raises(GodotError) as after:
        await bridge.call("ping")
    assert after.value.code is GodotErrorCode.BRIDGE_NOT_RUNNING


async def test_malformed_lines_are_dropped_and_the_connection_lives_on(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    fake = await connect_editor(bridge, project)

    await fake.send_raw(b'{not json\n[1,2]\n{"type":"mystery"}\n\n')
    reply = await bridge.call("ping")

    assert reply.result == {"pong": True}
    records = bridge.status().last_errors
    assert [record.code for record in records] == ["malformed_message"] * 3
    assert "not JSON" in records[0].message and "unknown event type" in records[2].message


async def test_oversized_answer_fails_its_call(
    make_bridge: MakeBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    bridge = await make_bridge(max_line_bytes=2_048)
    huge = "x" * 5_000
    await connect_editor(
        bridge, project, behaviour=FakeBehaviour(results={"get_editor_info": huge})
    )

    with pytest.raises(GodotError) as raised:
        await bridge.call("get_editor_info")
    reply = await bridge.call("ping")

    assert raised.value.code is GodotErrorCode.RESPONSE_TOO_LARGE
    assert "get_editor_info" in raised.value.message
    assert reply.result == {"pong": True}
