"""The default agent works out of the box: through `star-harness rpc` (no `--profile`) against
the mock LLM, it reads a file, edits it and runs the project's test in the real sandbox
(bubblewrap), each change approved by the client. `task` stays an agent without tools."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from rpc_child_support import rpc_child

from session_protocol_support import call, mock_rows, say, write_patch
from starharness import composition
from starharness.mockllm import MockLlmServer

CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\nassert add(2, 3) == 5, add(2, 3)\nprint('test_calc: 1 passed')\n"

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "calc.py").write_text(CALC, encoding="utf-8")
    (folder / "test_calc.py").write_text(TEST, encoding="utf-8")
    return folder


@needs_bwrap
async def test_the_default_agent_reads_edits_and_runs_a_test_in_the_sandbox(
    home: Path, project: Path, tmp_path: Path
) -> None:
    async with MockLlmServer() as mock:
        mock.script(
            "fix-1",
            [
                call("read_file", {"path": "calc.py"}),
                call(
                    "edit_file",
                    {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"},
                ),
                call("shell", {"command": "python3 test_calc.py"}),
                say("Fixed: add now adds, and test_calc passes."),
            ],
        )
        patch = write_patch(tmp_path, mock_rows(mock.base_url, None))
        args = ["--patch", str(patch), "--project", str(project)]
        async with rpc_child(home, tmp_path, args) as child:
            hello = await child.call("initialize", {"protocolVersion": 1})
            await child.call("session", {"action": "create", "sessionId": "fix-1"})
            done = await child.prompt_allowing("fix-1", "fix the failing test")
            await child.call("shutdown", {})
        mock.assert_complete()
    assert hello["profile"] == "agent"
    assert {"read_file", "edit_file", "write_file", "shell", "job_start", "delegate"} <= set(
        hello["tools"]
    )
    assert done["reason"] == "completed", done
    assert (project / "calc.py").read_text(encoding="utf-8") == CALC.replace("a - b", "a + b")
    results: dict[str, Any] = {
        u["name"]: u for u in child.updates if u.get("kind") == "tool.result"
    }
    assert not results["read_file"]["isError"]
    assert "return a - b" in str(results["read_file"])
    assert not results["edit_file"]["isError"]
    assert not results["shell"]["isError"], results["shell"]
    assert "test_calc: 1 passed" in str(results["shell"])
    asked = [u["tool"] for u in child.updates if u.get("kind") == "approval.asked"]
    assert asked == ["edit_file", "shell"]


def test_task_is_the_agent_without_tools_and_headless_is_the_default_agent() -> None:
    bare = composition.load("task")
    assert {row.id for row in bare.rows} >= {"llm", "tools", "agents"}
    assert not {"workspace", "sandbox", "compaction"} & {row.id for row in bare.rows}
    for name in ("agent", "headless"):
        rows = {row.id for row in composition.load(name).rows}
        assert {"workspace", "sandbox", "delegate", "compaction", "spill", "goals"} <= rows
        assert {"agents-md", "time"} <= rows
