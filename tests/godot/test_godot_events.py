"""Play errors in a ring buffer of 50, scene changes, and the status snapshot."""

from __future__ import annotations

from pathlib import Path

from godot_support import ConnectEditor

from starharness.godot import METHOD_TOOL, GodotBridge


async def test_play_errors_keep_the_newest_fifty(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    fake = await connect_editor(bridge, project)

    for number in range(60):
        await fake.play_error(f"error {number}", "warning" if number % 2 else "error")
    await bridge.call("ping")  # same connection, so every event before it was handled
    errors = bridge.play_errors()
    status = bridge.status()

    assert [e.message for e in errors] == [f"error {n}" for n in range(10, 60)]
    assert errors[0].severity == "error" and errors[1].severity == "warning"
    assert {e.client_id for e in errors} == {"c1"}
    assert status.play_errors_dropped == 10
    assert len(status.play_errors) == 50
    assert status.last_event == "play_error warning (c1)"

    bridge.clear_play_errors()
    assert bridge.play_errors() == []


async def test_scene_changes_are_tracked_per_editor(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    fake = await connect_editor(bridge, project)

    await fake.scene_changed("res://levels/two.tscn")
    await bridge.call("ping")
    client = bridge.status().clients[0]

    assert client.scene == "res://levels/two.tscn"
    assert bridge.status().last_event == "scene_changed res://levels/two.tscn (c1)"


async def test_a_bad_event_is_dropped_and_the_connection_lives_on(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    fake = await connect_editor(bridge, project)

    await fake.send({"type": "play_error", "severity": "fatal", "message": "x"})
    await fake.send({"type": "play_error"})
    reply = await bridge.call("ping")

    assert reply.result == {"pong": True}
    assert bridge.play_errors() == []
    assert sum("malformed" in e.message for e in bridge.status().last_errors) == 2


async def test_the_status_snapshot_names_clients_projects_and_failures(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    await connect_editor(bridge, project)
    await bridge.set_workspace(project)
    await bridge.call_tool("godot_stop_scene", {"unexpected": 1})
    await bridge.call("lint_scripts", {"paths": []})

    snapshot = bridge.status().to_dict()

    assert snapshot["running"] is True
    assert snapshot["port"] == bridge.port
    assert snapshot["workspace"] == str(project)
    assert snapshot["authenticatedClients"] == 1
    assert snapshot["activeClientId"] == "c1"
    clients = snapshot["clients"]
    assert isinstance(clients, list) and len(clients) == 1
    client = clients[0]
    assert isinstance(client, dict)
    assert client["projectPath"] == str(project) and client["matchesWorkspace"] is True
    assert snapshot["handshakeFailures"] == 0
    assert snapshot["enabledTools"] == sorted(METHOD_TOOL.values())
    assert snapshot["lastErrors"] == []
