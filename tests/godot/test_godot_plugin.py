"""GodotBridgePlugin: the bridge's lifetime, registration and dispatch gating, approvals."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from godot_support import PORT_SPAN, ConnectEditor, eventually
from pydantic import ValidationError

from starharness.godot import (
    BRIDGE_EVENT,
    GODOT_BRIDGE,
    GODOT_TAG,
    TOOL_NAMES,
    BridgeEvent,
    GodotBridge,
    GodotBridgeConfig,
    GodotBridgePlugin,
    bridge_tool,
    tool_spec,
)
from starharness.godot.runtime_tools import backstop_timeout_s
from starharness.godot.testing import FakeBehaviour
from starharness.runtime.approvals import (
    APPROVAL_ASKED,
    ApprovalRequest,
    ApprovalsConfig,
    ApprovalsPlugin,
)
from starharness.runtime.kernel import Context
from starharness.runtime.llm.types import ToolCall
from starharness.runtime.tools import (
    MUTATING,
    REQUIRES_APPROVAL,
    TOOLS,
    FailureCode,
    ToolOutcome,
    ToolsConfig,
    ToolsPlugin,
)
from starharness.runtime.workspace import WorkspaceConfig, WorkspacePlugin

ALLOW_OPEN = ApprovalsConfig(policy="never", allow=["godot_open_scene"])


MakeRuntime = Callable[..., Awaitable[Context]]


@pytest.fixture
async def make_runtime(home: Path, base_port: int, project: Path) -> AsyncIterator[MakeRuntime]:
    """A context with tools, approvals, a workspace on `project` and the bridge plugin."""
    contexts: list[Context] = []

    async def make(
        *, approvals: ApprovalsConfig | None = None, workspace: bool = True, **godot: Any
    ) -> Context:
        ctx = Context()
        contexts.append(ctx)
        await ToolsPlugin().setup(ctx.fork("tools"), ToolsConfig())
        await ApprovalsPlugin().setup(ctx.fork("approvals"), approvals or ApprovalsConfig())
        if workspace:
            await WorkspacePlugin().setup(ctx.fork("workspace"), WorkspaceConfig(root=str(project)))
        config = {
            "home": str(home),
            "base_port": base_port,
            "port_span": PORT_SPAN,
            "grace_period_ms": 0,
            **godot,
        }
        await GodotBridgePlugin().setup(ctx.fork("godot"), GodotBridgeConfig(**config))
        return ctx

    yield make
    # Disposing twice is harmless; this stops bridges a failing test left running.
    for ctx in contexts:
        await ctx.dispose()


async def call(ctx: Context, name: str, **arguments: Any) -> ToolOutcome:
    agent = ctx.child("agent")
    [outcome] = await agent.get(TOOLS).execute_calls([ToolCall("c1", name, json.dumps(arguments))])
    return outcome


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


async def test_only_enabled_tools_are_registered_with_their_schema_and_tags(
    make_runtime: MakeRuntime,
) -> None:
    ctx = await make_runtime(enabled_tools=["godot_open_scene", "godot_editor_info"])
    try:
        names = [n for n in ctx.get(TOOLS).names() if n.startswith("godot_")]
        assert names == ["godot_editor_info", "godot_open_scene"]
        for name in names:
            definition = ctx.get(TOOLS).get(name)
            spec = tool_spec(name)
            assert definition is not None and spec is not None
            assert definition.schema.parameters == spec.json_schema()
            assert definition.description == spec.description
        info = ctx.get(TOOLS).get("godot_editor_info")
        opener = ctx.get(TOOLS).get("godot_open_scene")
        assert info is not None and opener is not None
        assert info.tags == {GODOT_TAG}
        assert opener.tags == {GODOT_TAG, MUTATING, REQUIRES_APPROVAL}
        assert info.concurrency_safe and not opener.concurrency_safe
        bridge = ctx.get(GODOT_BRIDGE)
        assert bridge.enabled_tools == {"godot_editor_info", "godot_open_scene"}
    finally:
        await ctx.dispose()


async def test_no_tool_is_registered_by_default(make_runtime: MakeRuntime) -> None:
    ctx = await make_runtime()
    try:
        assert not [n for n in ctx.get(TOOLS).names() if n.startswith("godot_")]
        assert ctx.get(GODOT_BRIDGE).enabled_tools == frozenset()
    finally:
        await ctx.dispose()


async def test_a_disabled_tool_is_neither_registered_nor_dispatchable(
    make_runtime: MakeRuntime, project: Path, connect_editor: ConnectEditor
) -> None:
    ctx = await make_runtime(
        enabled_tools=["godot_editor_info"],
        approvals=ApprovalsConfig(policy="never", allow=["godot_reload_scene"]),
    )
    try:
        bridge = ctx.get(GODOT_BRIDGE)
        fake = await connect_editor(bridge, project)

        unknown = await call(ctx, "godot_reload_scene", path="res://main.tscn")
        assert unknown.error_code == FailureCode.UNKNOWN_TOOL

        # Registered by hand, past the plugin: the bridge still refuses the call.
        spec = tool_spec("godot_reload_scene")
        assert spec is not None
        ctx.get(TOOLS).register(bridge_tool(bridge, spec))
        refused = await call(ctx, "godot_reload_scene", path="res://main.tscn")
        assert refused.is_error
        assert refused.error_code == "tool_disabled"
        assert refused.content.startswith("Error: tool godot_reload_scene is disabled")
        assert fake.requests == []
    finally:
        await ctx.dispose()


@pytest.fixture
def resolved_project(project: Path) -> str:
    return str(project.resolve())


async def test_calls_reach_the_editor_of_the_workspace(
    make_runtime: MakeRuntime, project: Path, resolved_project: str, connect_editor: ConnectEditor
) -> None:
    ctx = await make_runtime(enabled_tools=["all"])
    try:
        bridge = ctx.get(GODOT_BRIDGE)
        assert bridge.status().workspace == resolved_project
        fake = await connect_editor(bridge, project)
        outcome = await call(ctx, "godot_editor_info")
        assert not outcome.is_error, outcome.content
        assert json.loads(outcome.content)["projectPath"] == str(project)
        tree = await call(ctx, "godot_get_scene_tree", max_depth=99)
        assert json.loads(tree.content)["maxDepth"] == 16  # clamped on the way out
        assert [r["method"] for r in fake.requests] == ["get_editor_info", "get_scene_tree"]
    finally:
        await ctx.dispose()


async def test_failures_reach_the_model_as_the_bridges_clear_errors(
    make_runtime: MakeRuntime, project: Path, connect_editor: ConnectEditor
) -> None:
    ctx = await make_runtime(enabled_tools=["godot_editor_info", "godot_inspect_script"])
    try:
        nobody = await call(ctx, "godot_editor_info")
        assert nobody.error_code == "no_editor"
        assert nobody.content.startswith("Error: no Godot editor connected. Start Godot")
        assert "enable the Agent RPC addon" in nobody.content

        behaviour = FakeBehaviour(errors={"inspect_script": "script not found: res://x.gd"})
        await connect_editor(ctx.get(GODOT_BRIDGE), project, behaviour=behaviour)
        refused = await call(ctx, "godot_inspect_script", path="res://x.gd")
        assert refused.error_code == "editor_error"
        assert refused.content == (
            "Error: the Godot editor refused inspect_script: script not found: res://x.gd"
        )
    finally:
        await ctx.dispose()


async def test_mutating_tools_ask_for_approval_before_anything_is_sent(
    make_runtime: MakeRuntime, project: Path, connect_editor: ConnectEditor
) -> None:
    denied = await make_runtime(enabled_tools=["godot_open_scene", "godot_editor_info"])
    try:
        fake = await connect_editor(denied.get(GODOT_BRIDGE), project)
        outcome = await call(denied, "godot_open_scene", path="res://main.tscn")
        assert outcome.error_code == FailureCode.APPROVAL_UNAVAILABLE
        assert "--allow godot_open_scene" in outcome.content
        assert not (await call(denied, "godot_editor_info")).is_error  # read-only: no ask
        assert [r["method"] for r in fake.requests] == ["get_editor_info"]
    finally:
        await denied.dispose()

    allowed = await make_runtime(enabled_tools=["godot_open_scene"], approvals=ALLOW_OPEN)
    try:
        fake = await connect_editor(allowed.get(GODOT_BRIDGE), project)
        outcome = await call(allowed, "godot_open_scene", path="main.tscn")
        assert json.loads(outcome.content) == {"opened": "res://main.tscn"}
        assert fake.requests[0]["path"] == "res://main.tscn"
    finally:
        await allowed.dispose()


async def test_invalid_arguments_fail_before_approval_is_asked(
    make_runtime: MakeRuntime, project: Path, connect_editor: ConnectEditor
) -> None:
    ctx = await make_runtime(enabled_tools=["godot_open_scene"], approvals=ALLOW_OPEN)
    asked: list[ApprovalRequest] = []
    ctx.on(APPROVAL_ASKED, asked.append)
    try:
        fake = await connect_editor(ctx.get(GODOT_BRIDGE), project)
        for arguments, problem in (
            ({"path": "/etc/passwd"}, "path: "),
            ({"path": "res://a.tscn", "extra": 1}, "extra: unknown parameter"),
            ({}, "path: Field required"),
        ):
            outcome = await call(ctx, "godot_open_scene", **arguments)
            assert outcome.error_code == FailureCode.INVALID_ARGS
            assert outcome.content.startswith("Error: invalid arguments for godot_open_scene: ")
            assert problem in outcome.content
        broken = ctx.child("raw")
        [not_json] = await broken.get(TOOLS).execute_calls([ToolCall("c", "godot_open_scene", "{")])
        assert "arguments are not valid JSON" in not_json.content
        [not_object] = await broken.get(TOOLS).execute_calls(
            [ToolCall("c", "godot_open_scene", "[]")]
        )
        assert "arguments must be a JSON object" in not_object.content
        assert asked == []
        assert fake.requests == []
    finally:
        await ctx.dispose()


async def test_the_bridge_is_a_service_owned_by_the_plugin(
    make_runtime: MakeRuntime, base_port: int
) -> None:
    ctx = await make_runtime(enabled_tools=["godot_editor_info"])
    registry = ctx.get(TOOLS)
    bridge = ctx.get(GODOT_BRIDGE)
    assert isinstance(bridge, GodotBridge)
    assert bridge.running
    port = bridge.port
    assert port is not None and base_port <= port < base_port + PORT_SPAN
    assert not port_is_free(port)
    await ctx.dispose()
    assert not bridge.running
    assert port_is_free(port)
    assert ctx.maybe(GODOT_BRIDGE) is None
    assert "godot_editor_info" not in registry.names()


async def test_bridge_events_are_published_on_the_context(
    make_runtime: MakeRuntime, project: Path, connect_editor: ConnectEditor
) -> None:
    ctx = await make_runtime()
    events: list[BridgeEvent] = []
    ctx.on(BRIDGE_EVENT, events.append)
    try:
        fake = await connect_editor(ctx.get(GODOT_BRIDGE), project)
        assert [e.kind for e in events] == ["connected"]
        await fake.play_error("boom")
        await eventually(lambda: len(events) == 2)
        await fake.close()
        await eventually(lambda: len(events) == 3)
        assert [e.kind for e in events] == ["connected", "play_error", "disconnected"]
        assert events[1].detail["message"] == "boom"
    finally:
        await ctx.dispose()


async def test_the_workspace_falls_back_to_the_current_folder(
    make_runtime: MakeRuntime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    ctx = await make_runtime(workspace=False)
    try:
        assert ctx.get(GODOT_BRIDGE).status().workspace == str(here)
    finally:
        await ctx.dispose()


def test_config_checks_tool_names_and_expands_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ValidationError, match="unknown Godot tools in enabled_tools: godot_fly"):
        GodotBridgeConfig(enabled_tools=["godot_editor_info", "godot_fly"])
    assert set(GodotBridgeConfig(enabled_tools=["all"]).enabled_tools) == TOOL_NAMES
    assert GodotBridgeConfig(enabled_tools=["godot_stop_scene"] * 2).enabled_tools == [
        "godot_stop_scene"
    ]
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path / "h"))
    settings = GodotBridgeConfig().settings(tmp_path)
    assert settings.endpoint_file == tmp_path / "h" / "godot" / "endpoint.json"
    assert settings.enabled_tools == frozenset()
    with pytest.raises(ValidationError, match="time_scale"):
        GodotBridgeConfig(time_scale=0)


def test_the_registry_timeout_outlasts_the_ladder(tmp_path: Path) -> None:
    settings = GodotBridgeConfig(grace_period_ms=8_000).settings(tmp_path)
    export = tool_spec("godot_export_project")
    info = tool_spec("godot_editor_info")
    run = tool_spec("godot_run_scene")
    assert export is not None and info is not None and run is not None
    assert backstop_timeout_s(export, settings) > 315 + 8
    assert backstop_timeout_s(run, settings) > 23 + 8
    assert 8 + 8 < backstop_timeout_s(info, settings) < 60
    fast = GodotBridgeConfig(time_scale=0.001).settings(tmp_path)
    assert backstop_timeout_s(export, fast) < 6
