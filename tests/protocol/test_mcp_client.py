"""The MCP client bridge: a small MCP server's tools, over stdio and HTTP, called by the agent."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from session_protocol_support import call, mock_rows, say
from starharness import composition
from starharness.mockllm import MockLlmServer
from starharness.runtime.config import Patch, start
from starharness.runtime.kernel import Context
from starharness.runtime.loop import AGENTS
from starharness.runtime.mcp_client import (
    MCP_CLIENTS,
    McpClientConfig,
    McpServerConfig,
    McpUnavailableError,
    Restarts,
    ServerConnection,
)
from starharness.runtime.session import event_types as ev
from starharness.runtime.tools import TOOLS

TINY = Path(__file__).with_name("tiny_mcp_server.py")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def wait_for_port(port: int, process: asyncio.subprocess.Process) -> None:
    for _ in range(3000):
        if process.returncode is not None:
            raise AssertionError("the HTTP MCP server exited while starting")
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.01)
            continue
        writer.close()
        return
    raise AssertionError("the HTTP MCP server did not start")


@pytest.fixture
async def http_server() -> AsyncIterator[tuple[str, asyncio.subprocess.Process]]:
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(TINY), "http", str(port), stderr=asyncio.subprocess.DEVNULL
    )
    try:
        await wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


async def start_http_server(port: int) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(TINY), "http", str(port), stderr=asyncio.subprocess.DEVNULL
    )
    await wait_for_port(port, process)
    return process


def bridge_patch(
    base_url: str, servers: list[dict[str, Any]], allow: list[str], **config: Any
) -> Patch:
    rows: list[dict[str, Any]] = [
        *mock_rows(base_url, None),
        {"id": "sessions", "config": {"store": "memory"}},
        {
            "id": "mcp",
            "plugin": "starharness.runtime.mcp_client:McpClientPlugin",
            "config": {"enabled": True, "servers": servers, "start_timeout_s": 60, **config},
            "before": "agents",
        },
        {"id": "approvals", "merge": {"mode": "allow-list", "allow": allow}},
    ]
    return Patch.of("test", rows)


async def turn(ctx: Context, session_id: str, text: str) -> list[dict[str, Any]]:
    """Run one turn of `session_id` (created on first use); the events it logged."""
    agent = ctx.get(AGENTS).get(session_id)
    if agent is None:
        agent = (await ctx.get(AGENTS).create(session_id)).agent
    before = len(agent.session.events)
    agent.followup(text)
    await agent.when_idle()
    return [{"type": e.type, **e.data} for e in agent.session.events[before:]]


def results(events: list[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    return [
        (e["name"], str(e["content"]), e["is_error"]) for e in events if e["type"] == ev.TOOL_RESULT
    ]


async def test_the_agent_calls_stdio_and_http_tools_and_survives_their_death(
    home: Path, tmp_path: Path, mock: MockLlmServer, http_server: tuple[str, Any]
) -> None:
    url, http_process = http_server
    pid_file = tmp_path / "stdio.pid"
    servers = [
        {
            "name": "local",
            "command": [sys.executable, str(TINY), "stdio"],
            "env": {"TINY_MCP_PID_FILE": str(pid_file)},
        },
        {"name": "web", "url": url},
    ]
    tools = ["mcp_local_add", "mcp_local_shout", "mcp_web_add", "mcp_web_shout"]
    resolved = composition.load("task", [bridge_patch(mock.base_url, servers, tools)], home=home)
    async with await start(resolved) as runtime:
        ctx = runtime.ctx
        assert sorted(n for n in ctx.get(TOOLS).names() if n.startswith("mcp_")) == tools
        definition = ctx.get(TOOLS).get("mcp_web_add")
        assert definition is not None and "requires-approval" in definition.tags
        mock.script(
            "s1",
            [
                call("mcp_local_add", {"a": 2, "b": 3}),
                call("mcp_web_shout", {"text": "hello"}),
                say("Both answered."),
                # turn 2: the servers are gone
                call("mcp_local_add", {"a": 1, "b": 1}),
                call("mcp_web_add", {"a": 1, "b": 1}),
                say("The tools are down."),
                # turn 3
                say("Still talking."),
            ],
        )
        first = await turn(ctx, "s1", "use the tools")
        assert results(first) == [("mcp_local_add", "5", False), ("mcp_web_shout", "HELLO", False)]

        os.kill(int(pid_file.read_text()), signal.SIGKILL)
        http_process.kill()
        await http_process.wait()

        second = await turn(ctx, "s1", "again")
        failed = results(second)
        assert [(name, is_error) for name, _, is_error in failed] == [
            ("mcp_local_add", True),
            ("mcp_web_add", True),
        ]
        for _, content, _ in failed:
            assert "MCP server" in content, content
        assert second[-1]["type"] == ev.TURN_END and second[-1]["reason"] == "completed"

        third = await turn(ctx, "s1", "and now?")
        assert third[-1]["reason"] == "completed"
        assert [e["text"] for e in third if e["type"] == ev.ASSISTANT_MESSAGE] == ["Still talking."]
    mock.assert_complete()


async def test_a_dead_server_is_restarted_by_the_next_call_of_its_tools(
    home: Path,
    tmp_path: Path,
    mock: MockLlmServer,
    http_server: tuple[str, Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    url, http_process = http_server
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    pid_file = tmp_path / "stdio.pid"
    servers = [
        {
            "name": "local",
            "command": [sys.executable, str(TINY), "stdio"],
            "env": {"TINY_MCP_PID_FILE": str(pid_file)},
        },
        {"name": "web", "url": url},
    ]
    allow = ["mcp_local_add", "mcp_web_add"]
    patch = bridge_patch(mock.base_url, servers, allow, restart_backoff_s=0.05)
    resolved = composition.load("task", [patch], home=home)
    caplog.set_level(logging.WARNING, logger="starharness.runtime.mcp_client")
    async with await start(resolved) as runtime:
        ctx = runtime.ctx
        mock.script(
            "r1",
            [
                call("mcp_local_add", {"a": 2, "b": 3}),
                call("mcp_web_add", {"a": 4, "b": 5}),
                say("Both answered."),
                # turn 2: both are dead
                call("mcp_local_add", {"a": 1, "b": 1}),
                call("mcp_local_add", {"a": 1, "b": 2}),
                call("mcp_web_add", {"a": 1, "b": 1}),
                call("mcp_web_add", {"a": 1, "b": 2}),
                say("Local is back, web is not."),
                # turn 3: the HTTP server runs again
                call("mcp_web_add", {"a": 3, "b": 4}),
                say("Web is back."),
            ],
        )
        first = await turn(ctx, "r1", "use the tools")
        assert results(first) == [("mcp_local_add", "5", False), ("mcp_web_add", "9", False)]
        first_pid = int(pid_file.read_text())

        os.kill(first_pid, signal.SIGKILL)
        http_process.kill()
        await http_process.wait()

        second = results(await turn(ctx, "r1", "again"))
        (_, gone, gone_error), (_, back, back_error) = second[:2]
        assert gone_error and "MCP server 'local'" in gone and "went away" in gone, gone
        assert (back, back_error) == ("3", False)  # restarted by this call
        assert int(pid_file.read_text()) != first_pid
        # HTTP: the dead session fails, and reconnecting fails while nothing listens.
        (_, web_gone, web_gone_error), (_, web_down, web_down_error) = second[2:]
        assert web_gone_error and "MCP server 'web'" in web_gone, web_gone
        assert web_down_error and "restart attempt 1 of 3 failed" in web_down, web_down
        status = {row["name"]: row for row in ctx.get(MCP_CLIENTS).status()}
        assert status["local"]["state"] == "ready" and status["web"]["state"] == "failed"

        restarted = await start_http_server(port)
        try:
            await asyncio.sleep(0.2)  # past the backoff after the failed attempt
            third = results(await turn(ctx, "r1", "and web?"))
            assert third == [("mcp_web_add", "7", False)]
            assert ctx.get(MCP_CLIENTS).status()[1]["failed_restarts"] == "0"
        finally:
            restarted.kill()
            await restarted.wait()
    logged = [r.getMessage() for r in caplog.records]
    assert any("'local' is down" in m and "restarting it (attempt 1 of 3)" in m for m in logged)
    assert any("'web'" in m and "restart attempt 1 of 3 failed" in m for m in logged), logged
    assert any("'web' is back" in m for m in logged), logged
    mock.assert_complete()


async def test_restarts_are_bounded_and_backed_off(
    tmp_path: Path, http_server: tuple[str, Any]
) -> None:
    url, http_process = http_server
    server = McpServerConfig(name="web", url=url)
    # A backoff long enough that the call right after a failed attempt always comes within it.
    connection = ServerConnection(server, Restarts(attempts=2, backoff_s=1.0, start_timeout_s=10))
    await connection.start(10)
    try:
        assert (await connection.call("add", {"a": 1, "b": 1})).structured_content is not None
        http_process.kill()
        await http_process.wait()
        with pytest.raises(McpUnavailableError, match="went away during the call"):
            await connection.call("add", {"a": 1, "b": 1})
        with pytest.raises(McpUnavailableError, match="restart attempt 1 of 2 failed, the next"):
            await connection.call("add", {"a": 1, "b": 1})
        with pytest.raises(McpUnavailableError, match="the next restart attempt is in"):
            await connection.call("add", {"a": 1, "b": 1})
        await asyncio.sleep(1.1)
        with pytest.raises(McpUnavailableError, match="restart attempt 2 of 2 failed, no more"):
            await connection.call("add", {"a": 1, "b": 1})
        with pytest.raises(McpUnavailableError, match="gave up after 2 failed restart attempts"):
            await connection.call("add", {"a": 1, "b": 1})
        assert connection.state == "failed"
    finally:
        await connection.aclose()


async def test_a_server_that_fails_to_start_leaves_the_process_running(
    home: Path, tmp_path: Path, mock: MockLlmServer
) -> None:
    servers = [
        {"name": "broken", "command": [str(tmp_path / "no-such-server")], "tools": ["lookup"]},
        {"name": "gone", "url": "http://127.0.0.1:9/mcp"},
        {"name": "local", "command": [sys.executable, str(TINY), "stdio"], "tools": ["add"]},
    ]
    allow = ["mcp_broken_lookup"]
    resolved = composition.load("task", [bridge_patch(mock.base_url, servers, allow)], home=home)
    async with await start(resolved) as runtime:
        ctx = runtime.ctx
        names = [n for n in ctx.get(TOOLS).names() if n.startswith("mcp_")]
        assert names == ["mcp_broken_lookup", "mcp_local_add"]
        mock.script("s3", [call("mcp_broken_lookup", {"q": "x"}), say("It is down.")])
        [(_, content, is_error)] = results(await turn(ctx, "s3", "look it up"))
        assert is_error and "MCP server 'broken'" in content and "not running" in content
        status = {row["name"]: row for row in ctx.get(MCP_CLIENTS).status()}
        assert status["broken"]["state"] == "failed"
        assert status["broken"]["problem"]
        assert status["gone"]["state"] == "failed"
        assert status["local"]["state"] == "ready"
        # Approvals refuse it here (not on the allow list): the pipeline guards bridged tools.
        mock.script("s2", [call("mcp_local_add", {"a": 1, "b": 2}), say("Refused.")])
        events = await turn(ctx, "s2", "add")
        [(name, content, is_error)] = results(events)
        assert name == "mcp_local_add" and is_error and "approval" in content


def test_the_bridge_is_off_by_default_and_checks_its_rows() -> None:
    assert McpClientConfig().enabled is False
    with pytest.raises(ValueError, match="exactly one of command or url"):
        McpClientConfig.model_validate({"servers": [{"name": "x"}]})
    with pytest.raises(ValueError, match="unique"):
        McpClientConfig.model_validate(
            {"servers": [{"name": "a", "url": "http://h/mcp"}, {"name": "a", "url": "http://h/m"}]}
        )
    with pytest.raises(ValueError, match="letters, digits"):
        McpClientConfig.model_validate({"servers": [{"name": "a b", "url": "http://h/mcp"}]})
