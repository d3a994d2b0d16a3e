"""One hidden list for every tool: the project's `.env` files (and the row's `hide` list) are
refused by read_file, list_files, search_files and write_file, and hidden from `shell`, alike."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sandbox_support import Machine, needs_bwrap

from starharness.runtime.approvals import ApprovalsConfig, ApprovalsPlugin
from starharness.runtime.codemode import CodeModeConfig, CodeModePlugin
from starharness.runtime.kernel import Context
from starharness.runtime.llm.types import ToolCall
from starharness.runtime.sandbox import SandboxConfig, SandboxPlugin
from starharness.runtime.tools import TOOLS, ToolOutcome, ToolsConfig, ToolsPlugin
from starharness.runtime.workspace import WORKSPACE_ERROR, WorkspaceConfig, WorkspacePlugin

SECRETS = {
    ".env": "OPENAI_API_KEY=sk-root-secret\n",
    ".env.local": "OPENAI_API_KEY=sk-local-secret\n",
    ".ENV.production": "OPENAI_API_KEY=sk-upper-secret\n",
    "sub/dir/.env": "OPENAI_API_KEY=sk-nested-secret\n",
    "conf/.env/keys.txt": "OPENAI_API_KEY=sk-folder-secret\n",
    "private/tokens.txt": "OPENAI_API_KEY=sk-row-hide-secret\n",  # the sandbox row's `hide`
}
HIDDEN_NAMES = [*SECRETS, "notes.txt", "sub/../.env", "./SUB/../.Env"]
"""Every way of naming a secret: `notes.txt` is a link to `.env`; `..` and case must not help."""


class Agent:
    def __init__(self, root: Context, agent: Context) -> None:
        self.root = root
        self.agent = agent
        self.calls = 0

    async def call(self, name: str, **arguments: Any) -> ToolOutcome:
        self.calls += 1
        call = ToolCall(f"c{self.calls}", name, json.dumps(arguments))
        [outcome] = await self.agent.get(TOOLS).execute_calls([call], session_id="s-1")
        return outcome


@pytest.fixture
def project(machine: Machine) -> Path:
    for name, text in SECRETS.items():
        path = machine.project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (machine.project / "notes.txt").symlink_to(".env")
    (machine.project / "readme.txt").write_text("OPENAI_API_KEY goes in .env: sk-public\n")
    return machine.project


@pytest.fixture
async def agent(project: Path) -> AsyncIterator[Agent]:
    root = Context()
    await ToolsPlugin().setup(root.fork("tools"), ToolsConfig())
    allow = ApprovalsConfig(policy="never", allow=["write_file", "shell"])
    await ApprovalsPlugin().setup(root.fork("approvals"), allow)
    await WorkspacePlugin().setup(root.fork("workspace"), WorkspaceConfig(root=str(project)))
    sandbox = SandboxConfig.model_validate(
        {
            "providers": ["bubblewrap"],
            "tier": "workspace-write",
            "guidance": False,
            "hide": [str(project / "private")],
        }
    )
    await SandboxPlugin().setup(root.fork("sandbox"), sandbox)
    await CodeModePlugin().setup(root.fork("codemode"), CodeModeConfig())
    try:
        yield Agent(root, root.child("agent"))
    finally:
        await root.dispose()


def _leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS.values() if secret.strip() in text or "-secret" in text]


@pytest.mark.parametrize("name", HIDDEN_NAMES)
async def test_read_file_refuses_every_hidden_name_and_says_why(agent: Agent, name: str) -> None:
    outcome = await agent.call("read_file", path=name)
    assert outcome.is_error, outcome.content
    assert outcome.error_code == WORKSPACE_ERROR
    assert "hidden from the file tools" in outcome.content
    assert not _leaks(outcome.content)


async def test_a_missing_secret_is_refused_like_a_present_one(agent: Agent) -> None:
    # "does not exist" for one and "hidden" for the other would tell which secrets exist.
    outcome = await agent.call("read_file", path="other/.env.staging")
    assert outcome.is_error and "hidden from the file tools" in outcome.content


async def test_search_files_never_reads_a_hidden_file(agent: Agent) -> None:
    outcome = await agent.call("search_files", query="OPENAI_API_KEY")
    assert not outcome.is_error, outcome.content
    result = json.loads(outcome.content)
    assert [match["path"] for match in result["matches"]] == ["readme.txt"]
    assert result["files_hidden"] >= 6  # counted, so the model knows some files were left out
    assert not _leaks(outcome.content)
    for options in ({"regex": True, "query": "sk-.*"}, {"glob": ".env*"}, {"glob": "*.txt"}):
        found = await agent.call("search_files", **{"query": "secret", **options})
        assert not _leaks(found.content), (options, found.content)


@pytest.mark.parametrize("path", [".env", "sub/dir/.env", "conf/.env", "private", "notes.txt"])
async def test_search_files_refuses_a_hidden_path_by_name(agent: Agent, path: str) -> None:
    outcome = await agent.call("search_files", query="KEY", path=path)
    assert outcome.is_error and "hidden from the file tools" in outcome.content
    assert not _leaks(outcome.content)


async def test_list_files_names_hidden_entries_without_size_or_contents(agent: Agent) -> None:
    outcome = await agent.call("list_files", recursive=True)
    entries = {entry["path"]: entry for entry in json.loads(outcome.content)["entries"]}
    for name in (".env", ".env.local", ".ENV.production", "sub/dir/.env", "conf/.env", "private"):
        assert entries[name] == {"path": name, "type": "hidden"}
    assert "conf/.env/keys.txt" not in entries  # a hidden folder is not entered
    assert "private/tokens.txt" not in entries
    assert entries["notes.txt"]["type"] == "hidden"  # a link to a secret is one
    refused = await agent.call("list_files", path="conf/.env")
    assert refused.is_error and "hidden" in refused.content


@pytest.mark.parametrize("name", [".env", "sub/dir/.env", "notes.txt", ".env.new", "private/x"])
async def test_write_file_refuses_hidden_paths_and_leaves_them_alone(
    agent: Agent, project: Path, name: str
) -> None:
    outcome = await agent.call("write_file", path=name, content="OPENAI_API_KEY=overwritten\n")
    assert outcome.is_error and "hidden from the file tools" in outcome.content
    for secret, text in SECRETS.items():
        assert (project / secret).read_text() == text
    assert not (project / ".env.new").exists()


@needs_bwrap
async def test_shell_hides_the_same_files_read_file_refuses(agent: Agent) -> None:
    listed = await agent.call("shell", command="ls -a . sub/dir")
    assert ".env" in listed.content  # the name shows, as in list_files
    for name in [*SECRETS, "notes.txt"]:
        outcome = await agent.call("shell", command=f"cat '{name}'")
        assert not _leaks(outcome.content), (name, outcome.content)
    public = await agent.call("shell", command="cat readme.txt && echo made > made.txt")
    assert not public.is_error and "sk-public" in public.content
    # Found again for each command: a .env made after the start is hidden from the next one.
    await agent.call("shell", command="mkdir -p late && echo sk-late-secret > late/.env")
    late = await agent.call("shell", command="cat late/.env")
    assert "sk-late-secret" not in late.content, late.content


PROGRAM = """
for name in (".env", "sub/dir/.env", "notes.txt"):
    try:
        print(name, "READ", tools.read_file(path=name))
    except ToolError as error:
        print(name, "REFUSED", error)
    try:
        print(name, "OPENED", open(name).read())
    except OSError as error:
        print(name, "UNREADABLE", type(error).__name__)
print("SEARCH", tools.search_files(query="OPENAI_API_KEY"))
"""


@needs_bwrap
async def test_code_mode_reaches_no_secret_through_tools_or_files(agent: Agent) -> None:
    outcome = await agent.call("run_code", program=PROGRAM)
    assert not outcome.is_error, outcome.content
    assert outcome.content.count("REFUSED") == 3, outcome.content
    assert "hidden from the file tools" in outcome.content
    assert outcome.content.count("UNREADABLE") == 3, outcome.content
    assert "readme.txt" in outcome.content  # the search ran, and found only the public file
    assert not _leaks(outcome.content), outcome.content
