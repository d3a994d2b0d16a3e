"""`star-harness mcp`, driven by the official MCP client over stdio, with a fake editor."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from godot_support import PORT_SPAN, free_base_port
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from starharness.godot import endpoint_path, tool_spec
from starharness.godot.bridge import read_endpoint
from starharness.godot.testing import FakeAddon
from starharness.runtime.kernel import Context, NoConfig, Plugin
from starharness.runtime.tools import TOOLS, ToolRunContext, define_tool

TESTS_DIR = Path(__file__).parent
KEY_VARIABLES = ("DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL")


# A plugin that prints, loaded by the server process from this module (PYTHONPATH), to prove
# that nothing but protocol frames reaches stdout.
class EchoParams(BaseModel):
    text: str


async def noisy_echo(args: EchoParams, run: ToolRunContext) -> str:
    print("noise from a tool")
    os.write(1, b"raw noise on fd 1\n")
    return args.text.upper()


class NoisyPlugin(Plugin[NoConfig]):
    inject = (TOOLS,)

    async def setup(self, ctx: Context, config: NoConfig) -> None:
        print("noise from setup")
        ctx.get(TOOLS).register(define_tool("noisy_echo", "Echo, loudly.", EchoParams, noisy_echo))


# -- helpers -----------------------------------------------------------------------------------


def server_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
    env["STAR_HARNESS_HOME"] = str(home)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS_DIR), env.get("PYTHONPATH")]))
    return env


def write_patch(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "mcp.patch.yml"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def godot_patch(tmp_path: Path, **merge: Any) -> Path:
    base = {"base_port": free_base_port(), "port_span": PORT_SPAN, "grace_period_ms": 10_000}
    return write_patch(tmp_path, [{"id": "godot", "merge": base | merge}])


@asynccontextmanager
async def mcp_session(
    home: Path, tmp_path: Path, *args: str
) -> AsyncIterator[tuple[ClientSession, Path]]:
    """The official client, talking to `python -m starharness.cli mcp ARGS` over stdio."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "starharness.cli", "mcp", *args],
        env=server_env(home),
        cwd=str(tmp_path),
    )
    errors = tmp_path / "server-stderr.log"
    with errors.open("w", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await asyncio.wait_for(session.initialize(), timeout=60)
            yield session, errors


async def connect_fake(home: Path, project: Path) -> FakeAddon:
    """Pair a fake editor with the bridge the server process started (found by its file)."""
    path = endpoint_path(home)
    for _ in range(2000):
        if (await asyncio.to_thread(read_endpoint, path)).endpoint is not None:
            break
        await asyncio.sleep(0.005)
    fake = await FakeAddon.from_endpoint(path, project_path=str(project))
    await fake.connect()
    return fake


def text_of(result: CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "game"
    folder.mkdir()
    (folder / "player.gd").write_text("extends CharacterBody2D\n", encoding="utf-8")
    return folder


# -- tests -------------------------------------------------------------------------------------


async def test_mcp_lists_only_enabled_tools_and_calls_the_editor(
    home: Path, tmp_path: Path, project: Path
) -> None:
    patch = godot_patch(tmp_path, enabled_tools=["godot_open_scene", "godot_editor_info"])
    async with mcp_session(
        home, tmp_path, "--profile", "godot", "--project", str(project), "--patch", str(patch)
    ) as (session, errors):
        listed = await session.list_tools()
        tools = {tool.name: tool for tool in listed.tools}
        assert sorted(tools) == [
            "edit_file",
            "godot_editor_info",
            "godot_open_scene",
            "job_read",
            "job_start",
            "job_stop",
            "list_files",
            "read_file",
            "sandbox_escalate",
            "search_files",
            "shell",
            "write_file",
        ]
        opener = tool_spec("godot_open_scene")
        assert opener is not None
        assert tools["godot_open_scene"].input_schema == opener.json_schema()
        assert tools["godot_open_scene"].description == opener.description
        annotations = {name: tool.annotations for name, tool in tools.items()}
        assert annotations["godot_editor_info"] is not None
        assert annotations["godot_editor_info"].read_only_hint is True
        assert annotations["godot_open_scene"] is not None
        assert annotations["godot_open_scene"].read_only_hint is False

        fake = await connect_fake(home, project)
        try:
            info = await session.call_tool("godot_editor_info", {})
            assert not info.is_error, text_of(info)
            assert json.loads(text_of(info))["projectPath"] == str(project)

            refused = await session.call_tool("godot_open_scene", {"path": "res://main.tscn"})
            assert refused.is_error
            assert "needs approval" in text_of(refused)
            assert "--allow godot_open_scene" in text_of(refused)

            disabled = await session.call_tool("godot_stop_scene", {})
            assert disabled.is_error
            assert text_of(disabled) == "Error: unknown tool 'godot_stop_scene'"

            read = await session.call_tool("read_file", {"path": "player.gd"})
            assert text_of(read) == "extends CharacterBody2D\n"
            escape = await session.call_tool("read_file", {"path": "../mcp.patch.yml"})
            assert escape.is_error
            assert "outside the project folder" in text_of(escape)

            bad = await session.call_tool("godot_open_scene", {"path": "/etc/passwd"})
            assert bad.is_error
            assert "invalid arguments for godot_open_scene: path:" in text_of(bad)

            assert [r["method"] for r in fake.requests] == ["get_editor_info"]
        finally:
            await fake.close()
    log = errors.read_text(encoding="utf-8")
    assert "Godot bridge listening on 127.0.0.1:" in log
    assert "serving 12 tools of profile 'godot'" in log


async def test_allow_lets_a_mutating_tool_through_the_same_gates(
    home: Path, tmp_path: Path, project: Path
) -> None:
    patch = godot_patch(tmp_path)
    args = ["--project", str(project), "--patch", str(patch), "--allow", "godot_open_scene"]
    async with mcp_session(home, tmp_path, *args) as (session, _errors):
        listed = await session.list_tools()
        assert len([t for t in listed.tools if t.name.startswith("godot_")]) == 27
        fake = await connect_fake(home, project)
        try:
            opened = await session.call_tool("godot_open_scene", {"path": "main.tscn"})
            assert not opened.is_error, text_of(opened)
            assert json.loads(text_of(opened)) == {"opened": "res://main.tscn"}
            stopped = await session.call_tool("godot_stop_scene", {})
            assert stopped.is_error  # not on the --allow list
            write = await session.call_tool("write_file", {"path": "x.txt", "content": "x"})
            assert write.is_error
            assert "--allow write_file" in text_of(write)
            assert [r["method"] for r in fake.requests] == ["open_scene"]
        finally:
            await fake.close()
    assert not (project / "x.txt").exists()


async def test_only_protocol_frames_reach_stdout(home: Path, tmp_path: Path) -> None:
    patch = write_patch(tmp_path, [{"id": "noisy", "plugin": "test_godot_mcp:NoisyPlugin"}])
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "starharness.cli",
        "mcp",
        "--profile",
        "task",
        "--patch",
        str(patch),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=server_env(home),
        cwd=tmp_path,
    )
    assert process.stdin is not None and process.stdout is not None
    requests: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "noisy_echo", "arguments": {"text": "quiet"}},
        },
    ]
    frames: list[dict[str, Any]] = []
    try:
        for request in requests:
            process.stdin.write(json.dumps(request).encode() + b"\n")
        await process.stdin.drain()
        while not any(frame.get("id") == 3 for frame in frames):
            line = await asyncio.wait_for(process.stdout.readline(), timeout=60)
            assert line, "the server closed stdout before answering"
            frames.append(json.loads(line))  # a stray print here would not parse
        process.stdin.close()
        rest, err = await asyncio.wait_for(process.communicate(), timeout=60)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 0, err.decode()
    frames.extend(json.loads(line) for line in rest.decode().splitlines())
    assert all(frame.get("jsonrpc") == "2.0" for frame in frames)
    by_id = {frame.get("id"): frame for frame in frames}
    assert [t["name"] for t in by_id[2]["result"]["tools"]] == ["noisy_echo"]
    assert by_id[3]["result"]["content"] == [{"type": "text", "text": "QUIET"}]
    assert by_id[3]["result"]["isError"] is False
    log = err.decode()
    for noise in ("noise from setup", "noise from a tool", "raw noise on fd 1"):
        assert noise in log


async def test_a_start_failure_is_one_line_on_stderr(home: Path, tmp_path: Path) -> None:
    patch = write_patch(tmp_path, [{"id": "godot", "merge": {"enabled_tools": ["godot_fly"]}}])
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "starharness.cli",
        "mcp",
        "--patch",
        str(patch),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=server_env(home),
        cwd=tmp_path,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 2
    assert out == b""
    assert "unknown Godot tools in enabled_tools: godot_fly" in err.decode()
