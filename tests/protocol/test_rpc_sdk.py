"""The SDK drives a real `star-harness rpc` child process through a task against the mock LLM."""

from __future__ import annotations

import asyncio
from pathlib import Path

from session_protocol_support import call, child_env, mock_rows, say, write_patch
from starharness.mockllm import MockLlmServer
from starharness.runtime.protocol import jsonrpc
from starharness.sdk import (
    ApprovalAsked,
    ApprovalDecided,
    Client,
    RpcCallError,
    TextDelta,
    ToolCalled,
    ToolResulted,
    TurnEnded,
    TurnStarted,
)


async def _errors_for(client: Client, count: int) -> list[dict[str, object]]:
    for _ in range(2000):
        if len(client.unmatched) >= count:
            return client.unmatched
        await asyncio.sleep(0.005)
    raise AssertionError(f"expected {count} unmatched answers, got {client.unmatched}")


async def test_the_sdk_runs_a_whole_task_with_an_approval(
    home: Path, project: Path, tmp_path: Path, mock: MockLlmServer
) -> None:
    patch = write_patch(tmp_path, mock_rows(mock.base_url, project))
    mock.script(
        "task-1",
        [call("write_file", {"path": "note.txt", "content": "hello"}), say("I wrote note.txt.")],
    )
    client = await Client.spawn("task", patches=[patch], env=child_env(home), cwd=tmp_path)
    async with client:
        assert client.server is not None
        assert client.server.approvals is True
        assert "write_file" in client.server.tools
        session = await client.create_session("task-1")
        turn = session.prompt("write a note")
        kinds: list[str] = []
        async for update in turn:
            kinds.append(update.kind)
            if isinstance(update, ApprovalAsked):
                assert update.tool == "write_file"
                await session.answer(update.call_id, "allow_once")
            if isinstance(update, ApprovalDecided):
                assert update.decision == "allowed_once"
            if isinstance(update, ToolResulted):
                assert not update.is_error, update.content
        assert turn.result is not None
        assert turn.result.reason == "completed"
        assert turn.result.text == "I wrote note.txt."
        assert (project / "note.txt").read_text(encoding="utf-8") == "hello"
        # Events in order: the call, its question and answer, the result, then the final text.
        compact = [k for i, k in enumerate(kinds) if i == 0 or kinds[i - 1] != k]
        assert compact == [
            "turn.start",
            "tool.call",
            "approval.asked",
            "approval.decided",
            "tool.result",
            "text.delta",
            "turn.end",
        ]

        # Bad input gets JSON-RPC errors and the process lives on.
        await client.send_raw("{not json")
        await client.send_raw('{"jsonrpc":"2.0","id":"u1","method":"steer","params":{}}')
        await client.send_raw('{"jsonrpc":"1.0","id":"v1","method":"prompt"}')
        errors = await _errors_for(client, 3)
        codes = sorted(error["error"]["code"] for error in errors)  # type: ignore[index]
        assert codes == sorted(
            [jsonrpc.PARSE_ERROR, jsonrpc.METHOD_NOT_FOUND, jsonrpc.INVALID_REQUEST]
        )
        try:
            await client.request("prompt", {"sessionId": "task-1"})
        except RpcCallError as error:
            assert error.code == jsonrpc.INVALID_PARAMS
            assert "text" in error.message
        else:
            raise AssertionError("a prompt without text was accepted")

        mock.script("task-1", [say("Still here.")])
        second = await session.prompt("are you there?").finish()
        assert second.text == "Still here."
        assert second.turn == 2
        assert await client.shutdown() == 0
    mock.assert_complete()


async def test_a_refused_approval_is_a_tool_error_and_resume_shows_the_history(
    home: Path, project: Path, tmp_path: Path, mock: MockLlmServer
) -> None:
    patch = write_patch(tmp_path, mock_rows(mock.base_url, project))
    mock.script(
        "task-2",
        [call("write_file", {"path": "x.txt", "content": "no"}), say("Understood, not writing.")],
    )
    async with await Client.spawn("task", patches=[patch], env=child_env(home)) as client:
        session = await client.create_session("task-2")
        turn = session.prompt("write x")
        seen: list[object] = []
        async for update in turn:
            seen.append(update)
            if isinstance(update, ApprovalAsked):
                await session.answer(update.call_id, "reject")
        results = [u for u in seen if isinstance(u, ToolResulted)]
        assert len(results) == 1 and results[0].is_error
        assert not (project / "x.txt").exists()
        assert any(isinstance(u, ToolCalled) for u in seen)
        assert isinstance(seen[0], TurnStarted) and isinstance(seen[-1], TurnEnded)
        assert "".join(u.text for u in seen if isinstance(u, TextDelta)) == (
            "Understood, not writing."
        )
        assert await client.shutdown() == 0

    # A second server process resumes the stored session and lists it.
    async with await Client.spawn("task", patches=[patch], env=child_env(home)) as client:
        listed = await client.list_sessions()
        assert [s.session_id for s in listed] == ["task-2"]
        assert listed[0].title == "write x"
        resumed = await client.resume_session("task-2")
        roles = [(item.role, item.tool) for item in resumed.history]
        assert roles == [("user", None), ("tool", "write_file"), ("assistant", None)]
        try:
            await client.resume_session("nope")
        except RpcCallError as error:
            assert error.code == jsonrpc.SESSION_NOT_FOUND
        else:
            raise AssertionError("resuming a missing session succeeded")
        assert await client.shutdown() == 0


async def test_shutdown_during_a_waiting_turn_stops_cleanly(
    home: Path, project: Path, tmp_path: Path, mock: MockLlmServer
) -> None:
    patch = write_patch(tmp_path, mock_rows(mock.base_url, project))
    mock.script("task-3", [call("write_file", {"path": "y.txt", "content": "y"}), say("unused")])
    async with await Client.spawn("task", patches=[patch], env=child_env(home)) as client:
        session = await client.create_session("task-3")
        stream = session.prompt("write y")
        async for update in stream:
            if isinstance(update, ApprovalAsked):
                break  # the turn now waits for an answer that never comes
        assert await client.shutdown() == 0
    assert not (project / "y.txt").exists()
