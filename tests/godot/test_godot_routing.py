"""Two editors of different projects: only the workspace's project receives calls."""

from __future__ import annotations

from pathlib import Path

import pytest
from godot_support import ConnectEditor, eventually

from starharness.godot import GodotBridge, GodotError, GodotErrorCode


@pytest.fixture
def other_project(tmp_path: Path) -> Path:
    folder = tmp_path / "other"
    folder.mkdir()
    return folder


async def test_calls_fall_back_to_the_workspace_editor_and_say_so(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path, other_project: Path
) -> None:
    stranger = await connect_editor(bridge, other_project)
    ours = await connect_editor(bridge, f"{project}/")
    await bridge.set_workspace(project)

    outcome = await bridge.call_tool("godot_editor_info")

    assert bridge.status().active_client_id == "c1"
    assert outcome.ok and outcome.routed_to == "c2" and outcome.client_id == "c2"
    assert outcome.text.endswith("[routedTo: c2]")
    assert stranger.requests == [] and len(ours.requests) == 1


async def test_an_explicit_editor_of_another_project_is_refused(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path, other_project: Path
) -> None:
    stranger = await connect_editor(bridge, other_project)
    await connect_editor(bridge, project)
    await bridge.set_workspace(project)

    outcome = await bridge.call_tool("godot_stop_scene", client_id="c1")
    with pytest.raises(GodotError) as activating:
        bridge.set_active_client("c1")

    assert outcome.error_code is GodotErrorCode.CLIENT_OTHER_PROJECT
    assert str(other_project) in outcome.text and str(project) in outcome.text
    assert activating.value.code is GodotErrorCode.CLIENT_OTHER_PROJECT
    assert stranger.requests == []


async def test_an_explicit_editor_of_this_project_is_used(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    await connect_editor(bridge, project)
    second = await connect_editor(bridge, project)
    await bridge.set_workspace(project)

    reply = await bridge.call("ping", client_id="c2")
    bridge.set_active_client("c2")
    default = await bridge.call("ping")

    assert reply.client_id == "c2" and reply.routed_to is None
    assert default.client_id == "c2" and default.routed_to is None
    assert len(second.requests) == 2


async def test_an_unknown_explicit_editor_is_refused(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    await connect_editor(bridge, project)

    with pytest.raises(GodotError) as raised:
        await bridge.call("ping", client_id="c9")

    assert raised.value.code is GodotErrorCode.CLIENT_NOT_FOUND
    assert "c9" in raised.value.message and "c1" in raised.value.message


async def test_only_other_projects_connected_means_no_editor_for_this_project(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path, other_project: Path
) -> None:
    stranger = await connect_editor(bridge, other_project)
    await bridge.set_workspace(project)

    with pytest.raises(GodotError) as raised:
        await bridge.call("ping")

    assert raised.value.code is GodotErrorCode.NO_EDITOR_FOR_PROJECT
    assert f"c1 ({other_project})" in raised.value.message
    assert str(project) in raised.value.message
    assert stranger.requests == []


async def test_symlinked_project_paths_match_the_workspace(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path, tmp_path: Path
) -> None:
    link = tmp_path / "link"
    link.symlink_to(project, target_is_directory=True)
    await connect_editor(bridge, link)
    await bridge.set_workspace(project)

    reply = await bridge.call("ping")

    assert reply.client_id == "c1" and reply.routed_to is None
    assert bridge.status().clients[0].matches_workspace


async def test_without_a_workspace_any_editor_may_answer(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path, other_project: Path
) -> None:
    await connect_editor(bridge, other_project)
    await connect_editor(bridge, project)

    reply = await bridge.call("ping")

    assert reply.client_id == "c1" and reply.routed_to is None


async def test_the_next_editor_becomes_active_when_the_active_one_leaves(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    first = await connect_editor(bridge, project)
    await connect_editor(bridge, project)

    await first.close()
    await eventually(lambda: len(bridge.status().clients) == 1)
    reply = await bridge.call("ping")

    assert reply.client_id == "c2" and reply.routed_to is None
    assert bridge.status().active_client_id == "c2"
