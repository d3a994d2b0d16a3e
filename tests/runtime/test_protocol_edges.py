"""The session protocol's edges through the real commands: `rpc` and `acp` start and answer
`initialize` without a model key and refuse a prompt naming the variable to set; a prompt
answers `aborted` with its cause when its session is closed or the server shut down mid-turn;
every request in flight at `shutdown` is answered, and what comes after it gets -32006."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import pytest
from acp import PROTOCOL_VERSION, Client, RequestError, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from rpc_child_support import RpcChild, rpc_child

from session_protocol_support import call, child_env, mock_rows, say, write_patch
from starharness.mockllm import MockLlmServer
from starharness.runtime.protocol import MODEL_UNAVAILABLE, SHUTTING_DOWN


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("old\n", encoding="utf-8")
    return folder


# -- without a key ---------------------------------------------------------------------------


async def test_rpc_without_a_key_initializes_and_refuses_a_prompt_naming_the_variable(
    home: Path, tmp_path: Path
) -> None:
    async with rpc_child(home, tmp_path) as child:
        hello = await child.call("initialize", {"protocolVersion": 1})
        model = hello["model"]
        assert model["ready"] is False
        assert model["variable"] == "DEEPSEEK_API_KEY"
        assert "DEEPSEEK_API_KEY is not set" in model["problem"]
        assert "--provider" in model["problem"]
        assert "read_file" in hello["tools"]
        sid = (await child.call("session", {"action": "create"}))["sessionId"]
        refused = await child.answer(await child.send("prompt", {"sessionId": sid, "text": "hi"}))
        error = refused["error"]
        assert error["code"] == MODEL_UNAVAILABLE
        assert "DEEPSEEK_API_KEY is not set" in error["message"]
        assert "star-harness rpc" in error["message"]
        assert error["data"] == {"variable": "DEEPSEEK_API_KEY"}
        # The connection lives on.
        assert (await child.call("session", {"action": "list"}))["sessions"] is not None
        await child.call("shutdown", {})
        assert await child.read_to_end() == b""
    assert child.process.returncode == 0


class _QuietClient:
    """An ACP client for requests that never reach a turn."""

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no permission is asked without a model")

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        pass


@asynccontextmanager
async def _acp_child(home: Path, cwd: Path, *args: str) -> AsyncIterator[ClientSideConnection]:
    """`star-harness acp ARGS` on pipes, seen from a client that is never asked anything."""
    command = ["-m", "starharness.cli", "acp", *args]
    async with spawn_agent_process(
        cast(Client, _QuietClient()), sys.executable, *command, env=child_env(home), cwd=cwd
    ) as (conn, _process):
        yield conn


async def test_acp_without_a_key_answers_initialize_with_auth_methods(
    home: Path, tmp_path: Path
) -> None:
    async with _acp_child(home, tmp_path) as conn:
        init = await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 60)
        assert init.auth_methods is not None
        [method] = init.auth_methods
        dumped = method.model_dump(by_alias=True, exclude_none=True)
        assert dumped["type"] == "env_var"
        assert [v["name"] for v in dumped["vars"]] == ["DEEPSEEK_API_KEY"]
        assert "DEEPSEEK_API_KEY is not set" in dumped["description"]
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        with pytest.raises(RequestError) as refused:
            await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=[text_block("hi")]), 60
            )
        assert refused.value.code == RequestError.auth_required().code
        assert "DEEPSEEK_API_KEY is not set" in str(refused.value)


async def test_acp_with_a_model_lists_no_auth_methods(home: Path, tmp_path: Path) -> None:
    patch = write_patch(tmp_path, mock_rows("http://127.0.0.1:9/v1", None))
    async with _acp_child(home, tmp_path, "--patch", str(patch)) as conn:
        init = await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 60)
        assert init.auth_methods == []


# -- close and shutdown mid-turn -------------------------------------------------------------


@asynccontextmanager
async def _mid_turn(
    home: Path, tmp_path: Path, project: Path, sid: str
) -> AsyncIterator[tuple[RpcChild, int]]:
    """`rpc` at the mock with session `sid`, whose prompt's turn waits for approval to edit
    notes.txt: the child and the prompt's request id."""
    edit = {"path": "notes.txt", "old_text": "old", "new_text": "new"}
    async with MockLlmServer() as mock:
        mock.script(sid, [call("edit_file", edit), say("done")])
        patch = write_patch(tmp_path, mock_rows(mock.base_url, None))
        args = ["--patch", str(patch), "--project", str(project)]
        async with rpc_child(home, tmp_path, args) as child:
            await child.call("initialize", {"protocolVersion": 1})
            await child.call("session", {"action": "create", "sessionId": sid})
            prompt_id = await child.send("prompt", {"sessionId": sid, "text": "change the notes"})
            while not any(u.get("kind") == "approval.asked" for u in child.updates):
                other = await child.send("session", {"action": "list"})
                await child.answer(other)
            yield child, prompt_id


async def test_a_prompt_answers_aborted_with_its_cause_when_its_session_is_closed(
    home: Path, tmp_path: Path, project: Path
) -> None:
    async with _mid_turn(home, tmp_path, project, "s1") as (child, prompt_id):
        await child.call("session", {"action": "close", "sessionId": "s1"})
        answer = await child.answer(prompt_id)
        await child.call("shutdown", {})
    result = answer["result"]
    assert (result["reason"], result["cause"]) == ("aborted", "close"), result
    assert (project / "notes.txt").read_text(encoding="utf-8") == "old\n"


async def test_shutdown_mid_turn_answers_the_prompt_first_then_refuses_what_follows(
    home: Path, tmp_path: Path, project: Path
) -> None:
    async with _mid_turn(home, tmp_path, project, "s2") as (child, prompt_id):
        shutdown_id = await child.send("shutdown", {})
        late_init = await child.send("initialize", {"protocolVersion": 1})
        late_session = await child.send("session", {"action": "list"})
        rest = (await child.read_to_end()).decode().splitlines()
    answers = [json.loads(line) for line in rest]
    by_id = {a["id"]: a for a in answers if "id" in a}
    order = [a["id"] for a in answers if "id" in a]
    assert by_id[prompt_id]["result"]["reason"] == "aborted"
    assert by_id[prompt_id]["result"]["cause"] == "shutdown"
    assert by_id[shutdown_id]["result"] == {}
    # Every request is answered; the shutdown's answer comes after the prompt's.
    assert order.index(prompt_id) < order.index(shutdown_id)
    for late in (late_init, late_session):
        assert by_id[late]["error"]["code"] == SHUTTING_DOWN, by_id[late]
    assert child.process.returncode == 0
