"""`star-harness acp`, driven by the agent-client-protocol package's own client."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, Client, spawn_agent_process, text_block
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallUpdate,
    UserMessageChunk,
)

from session_protocol_support import call, child_env, mock_rows, say, write_patch
from starharness.mockllm import MockLlmServer


class RecordingClient:
    """An ACP client that keeps every update and allows each permission once."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.permissions: list[ToolCallUpdate] = []

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        self.permissions.append(tool_call)
        [allow] = [option for option in options if option.kind == "allow_once"]
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=allow.option_id)
        )

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append(update)

    def on_connect(self, conn: Any) -> None:
        pass

    def agent_text(self) -> list[str]:
        return [
            u.content.text
            for u in self.updates
            if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContentBlock)
        ]


async def test_the_acp_client_completes_a_prompt_turn_with_a_permission(
    home: Path, project: Path, tmp_path: Path, mock: MockLlmServer
) -> None:
    patch = write_patch(tmp_path, mock_rows(mock.base_url, project))
    mock.script_next(
        [call("write_file", {"path": "a.txt", "content": "from acp"}), say("Saved a.txt.")]
    )
    client = RecordingClient()
    args = ["-m", "starharness.cli", "acp", "--patch", str(patch)]
    # The recorder answers only what this test needs of the Client protocol.
    async with spawn_agent_process(
        cast(Client, client), sys.executable, *args, env=child_env(home), cwd=tmp_path
    ) as (conn, process):
        init = await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 60)
        assert init.agent_capabilities is not None and init.agent_capabilities.load_session
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        response = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[text_block("save a file")]), 60
        )
        assert response.stop_reason == "end_turn"
        # Only the committed final text is reported, once.
        assert client.agent_text() == ["Saved a.txt."]
        [permission] = client.permissions
        assert permission.title is not None and permission.title.startswith("write_file ")
        assert (project / "a.txt").read_text(encoding="utf-8") == "from acp"
    assert process.returncode is not None

    # Another editor session loads it: the conversation is replayed before the answer.
    again = RecordingClient()
    async with spawn_agent_process(
        cast(Client, again), sys.executable, *args, env=child_env(home), cwd=tmp_path
    ) as (conn, _):
        await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 60)
        listed = await conn.list_sessions()
        assert [s.session_id for s in listed.sessions] == [session.session_id]
        await conn.load_session(cwd=str(project), session_id=session.session_id, mcp_servers=[])
        users = [
            u.content.text
            for u in again.updates
            if isinstance(u, UserMessageChunk) and isinstance(u.content, TextContentBlock)
        ]
        assert users == ["save a file"]
        assert again.agent_text() == ["Saved a.txt."]
