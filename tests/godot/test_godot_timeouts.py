"""The timeout ladder on a real socket, with protocol clocks scaled down."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from godot_support import ConnectEditor, MakeBridge
from pydantic import JsonValue

from starharness.godot import GodotError, GodotErrorCode
from starharness.godot.testing import FakeAddon, FakeBehaviour

# (method, params, the ladder's limit in milliseconds named by the timeout error)
LADDER: list[tuple[str, dict[str, JsonValue], int]] = [
    ("ping", {}, 8_000),
    ("get_editor_info", {}, 8_000),
    ("get_scene_tree", {"path": "res://a.tscn", "max_depth": 3}, 8_000),
    ("run_current_scene", {}, 11_000),
    ("run_current_scene", {"wait_ms": 1_000}, 9_000),
    ("play_main_scene", {"wait_ms": 99_999}, 23_000),
    ("wait_for_import_done", {"paths": ["res://a.png"]}, 38_000),
    ("wait_for_import_done", {"paths": ["res://a.png"], "timeout_ms": 10**9}, 68_000),
    ("lint_scripts", {"paths": ["res://a.gd"]}, 32_000),
    ("list_project_files", {}, 32_000),
    ("import_resources", {}, 32_000),
    ("find_unused_resources", {}, 32_000),
    ("inspect_script", {"path": "res://a.gd"}, 32_000),
    ("find_class_name_conflicts", {}, 32_000),
    ("export_project", {"preset": "Linux", "output_dir": "res://build"}, 315_000),
]


@pytest.mark.parametrize(("method", "params", "limit_ms"), LADDER)
async def test_a_silent_editor_times_out_per_the_ladder(
    method: str,
    params: dict[str, JsonValue],
    limit_ms: int,
    make_bridge: MakeBridge,
    connect_editor: ConnectEditor,
    project: Path,
) -> None:
    bridge = await make_bridge(time_scale=0.001)
    await connect_editor(bridge, project, behaviour=FakeBehaviour(silent={method}))

    with pytest.raises(GodotError) as raised:
        await bridge.call(method, params)

    assert raised.value.code is GodotErrorCode.TIMEOUT
    assert f"did not answer {method} within {limit_ms} ms" in raised.value.message
    assert bridge.status().clients[0].in_flight == 0


async def test_the_same_delay_times_out_ping_but_not_export(
    make_bridge: MakeBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    # Scaled: ping waits 40 ms, export 1,575 ms; the editor takes 300 ms for both.
    bridge = await make_bridge(time_scale=0.005)
    slow = FakeBehaviour(delays_s={"ping": 0.3, "export_project": 0.3})
    await connect_editor(bridge, project, behaviour=slow)

    export, ping = await asyncio.gather(
        bridge.call("export_project", {"preset": "Linux", "output_dir": "res://build"}),
        bridge.call("ping"),
        return_exceptions=True,
    )

    assert isinstance(ping, GodotError) and ping.code is GodotErrorCode.TIMEOUT
    assert not isinstance(export, BaseException)
    assert export.result is not None


async def test_a_late_answer_is_dropped_and_ids_keep_answers_apart(
    make_bridge: MakeBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    bridge = await make_bridge(time_scale=0.001)
    behaviour = FakeBehaviour(delays_s={"ping": 0.05})
    fake = await connect_editor(bridge, project, behaviour=behaviour)

    with pytest.raises(GodotError):
        await bridge.call("ping")
    behaviour.delays_s.clear()
    info = await bridge.call("get_editor_info")
    await fake.wait_for_requests(2)
    await asyncio.sleep(0.08)  # the late pong arrives meanwhile and must be ignored
    pong = await bridge.call("ping")

    assert isinstance(info.result, dict) and "godotVersion" in info.result
    assert pong.result == {"pong": True}


async def test_a_call_waits_out_the_grace_period_for_the_first_editor(
    make_bridge: MakeBridge, project: Path
) -> None:
    bridge = await make_bridge(grace_period_ms=5_000)
    call = asyncio.create_task(bridge.call("ping"))
    await asyncio.sleep(0.01)
    fake = await FakeAddon.from_endpoint(bridge.settings.endpoint_file, project_path=str(project))
    try:
        await fake.connect()
        reply = await call
    finally:
        await fake.close()

    assert reply.result == {"pong": True}


async def test_without_grace_a_call_fails_at_once_when_no_editor_is_connected(
    make_bridge: MakeBridge,
) -> None:
    bridge = await make_bridge(grace_period_ms=0)

    with pytest.raises(GodotError) as raised:
        await bridge.call("ping")

    assert raised.value.code is GodotErrorCode.NO_EDITOR
    assert "enable the Agent RPC addon" in raised.value.message
