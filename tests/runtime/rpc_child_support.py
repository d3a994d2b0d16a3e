"""A `star-harness rpc` child on pipes, for tests that go through the real command: send
requests, collect the updates, read each answer by its id."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

from session_protocol_support import child_env

ANSWER_DEADLINE_S = 120


class RpcChild:
    """Writes JSON-RPC requests to the child and reads its lines; updates are kept in order."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.updates: list[dict[str, Any]] = []
        self.answers: dict[int | str, dict[str, Any]] = {}
        self._next_id = 0

    async def send(self, method: str, params: dict[str, Any]) -> int:
        self._next_id += 1
        line = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(json.dumps(line).encode() + b"\n")
        await stdin.drain()
        return self._next_id

    async def answer(self, request_id: int) -> dict[str, Any]:
        """The answer to `request_id` (its whole message), reading lines until it comes."""
        while request_id not in self.answers:
            await self._read(request_id)
        return self.answers.pop(request_id)

    async def prompt_allowing(self, session_id: str, text: str) -> dict[str, Any]:
        """`prompt`, answering `allow_once` to every approval it asks; returns its result."""
        prompt_id = await self.send("prompt", {"sessionId": session_id, "text": text})
        while prompt_id not in self.answers:
            update = await self._read(prompt_id)
            if update is not None and update.get("kind") == "approval.asked":
                answer = {
                    "action": "answer",
                    "sessionId": session_id,
                    "callId": update["callId"],
                    "answer": "allow_once",
                }
                await self.send("session", answer)
        answer = self.answers.pop(prompt_id)
        assert "result" in answer, answer
        return cast("dict[str, Any]", answer["result"])

    async def _read(self, waiting_for: int) -> dict[str, Any] | None:
        """Read one line: an answer is kept in `answers` (None), an update in `updates` and
        returned."""
        stdout = self.process.stdout
        assert stdout is not None
        line = await asyncio.wait_for(stdout.readline(), ANSWER_DEADLINE_S)
        assert line, f"the child ended before answering request {waiting_for}"
        message = cast("dict[str, Any]", json.loads(line))
        if "id" in message and "method" not in message:
            self.answers[message["id"]] = message
            return None
        update = cast("dict[str, Any]", message["params"])
        self.updates.append(update)
        return update

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and return its `result`; an error answer fails the test."""
        answer = await self.answer(await self.send(method, params))
        assert "result" in answer, answer
        return cast("dict[str, Any]", answer["result"])

    async def read_to_end(self) -> bytes:
        stdout = self.process.stdout
        assert stdout is not None
        return await asyncio.wait_for(stdout.read(), ANSWER_DEADLINE_S)


@asynccontextmanager
async def rpc_child(
    home: Path,
    cwd: Path,
    args: Sequence[str] = (),
    *,
    command: str = "rpc",
    env: dict[str, str] | None = None,
) -> AsyncIterator[RpcChild]:
    """`star-harness rpc ARGS` with `home` as its home and no provider keys; killed at the end
    if it has not exited."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "starharness.cli",
        command,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**child_env(home), **(env or {})},
        cwd=cwd,
        limit=64 * 1024 * 1024,
    )
    child = RpcChild(process)
    try:
        yield child
    finally:
        if process.returncode is None:
            assert process.stdin is not None
            process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 20)
            except TimeoutError:
                process.kill()
                await process.wait()


def stored_events(home: Path, session_id: str) -> list[tuple[str, dict[str, Any]]]:
    """(type, data) of every event the home's SQLite store holds for `session_id`."""
    import sqlite3

    with sqlite3.connect(home / "sessions.db") as db:
        rows = db.execute(
            "SELECT type, data FROM events WHERE session_id = ? ORDER BY seq", (session_id,)
        ).fetchall()
    return [(kind, json.loads(data)) for kind, data in rows]
