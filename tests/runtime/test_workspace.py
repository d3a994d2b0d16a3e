"""File tools: confinement to the project folder, limits, and the approval gate on write_file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from starharness.runtime.approvals import ApprovalsConfig, ApprovalsPlugin
from starharness.runtime.kernel import Context
from starharness.runtime.llm.types import ToolCall
from starharness.runtime.prompt import PROMPT, PromptConfig, PromptPlugin
from starharness.runtime.tools import (
    MUTATING,
    REQUIRES_APPROVAL,
    TOOLS,
    FailureCode,
    ToolOutcome,
    ToolsConfig,
    ToolsPlugin,
)
from starharness.runtime.workspace import (
    WORKSPACE,
    WORKSPACE_ERROR,
    HiddenPathError,
    Workspace,
    WorkspaceConfig,
    WorkspaceError,
    WorkspacePlugin,
)

ALLOW_WRITE = ApprovalsConfig(policy="never", allow=["write_file"])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.txt").write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    (root / "README.md").write_text("# Demo\nHello world\n", encoding="utf-8")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("top secret\n", encoding="utf-8")
    return folder


@pytest.fixture
def evil_sibling(tmp_path: Path) -> Path:
    # Same prefix as the root's name: a string prefix check would let it through.
    folder = tmp_path / "proj-evil"
    folder.mkdir()
    (folder / "secret.txt").write_text("evil secret\n", encoding="utf-8")
    return folder


async def agent_for(
    root: Path, *, approvals: ApprovalsConfig | None = None, **config: Any
) -> Context:
    ctx = Context()
    await ToolsPlugin().setup(ctx.fork("tools"), ToolsConfig())
    await PromptPlugin().setup(ctx.fork("prompt"), PromptConfig())
    await ApprovalsPlugin().setup(ctx.fork("approvals"), approvals or ApprovalsConfig())
    await WorkspacePlugin().setup(ctx.fork("workspace"), WorkspaceConfig(root=str(root), **config))
    return ctx.child("agent")


async def call(agent: Context, name: str, **arguments: Any) -> ToolOutcome:
    [outcome] = await agent.get(TOOLS).execute_calls([ToolCall("c1", name, json.dumps(arguments))])
    return outcome


def result(outcome: ToolOutcome) -> Any:
    assert not outcome.is_error, outcome.content
    return json.loads(outcome.content)


# -- confinement -------------------------------------------------------------------------------


def test_paths_inside_resolve_and_paths_outside_are_refused(
    project: Path, outside: Path, evil_sibling: Path
) -> None:
    workspace = Workspace.open(project)
    assert workspace.resolve("src/main.txt") == project.resolve() / "src" / "main.txt"
    assert workspace.resolve("src/../README.md") == project.resolve() / "README.md"
    assert workspace.resolve(".") == workspace.root
    assert workspace.resolve(str(project / "README.md")) == project.resolve() / "README.md"
    for escape in (
        "..",
        "../outside/secret.txt",
        "src/../../outside/secret.txt",
        str(outside / "secret.txt"),
        "../proj-evil/secret.txt",
        str(evil_sibling / "secret.txt"),
        "/etc/passwd",
    ):
        with pytest.raises(WorkspaceError, match="outside the project folder"):
            workspace.resolve(escape)
    with pytest.raises(WorkspaceError, match="NUL"):
        workspace.resolve("a\x00b")


def test_a_missing_or_non_folder_root_is_refused(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        Workspace.open(tmp_path / "nowhere")
    file = tmp_path / "file.txt"
    file.write_text("x", encoding="utf-8")
    with pytest.raises(WorkspaceError, match="is not a folder"):
        Workspace.open(file)


SEGMENTS = st.sampled_from(["..", ".", "src", "main.txt", "leak", "proj", "proj-evil", "x"])


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(SEGMENTS, min_size=1, max_size=6), absolute=st.booleans())
def test_resolve_never_returns_a_path_outside_the_root(
    project: Path, outside: Path, evil_sibling: Path, parts: list[str], absolute: bool
) -> None:
    leak = project / "leak"
    if not leak.is_symlink():
        leak.symlink_to(outside, target_is_directory=True)
    workspace = Workspace.open(project)
    root = str(workspace.root)
    text = "/".join(parts)
    if absolute:
        text = str(project.parent / text)
    # An independent oracle: the OS's realpath, and containment by os.path.commonpath.
    expected = os.path.realpath(os.path.join(root, text))  # noqa: PTH118 (not pathlib, on purpose)
    inside = os.path.commonpath([expected, root]) == root
    if inside:
        assert workspace.resolve(text) == Path(expected)
    else:
        with pytest.raises(WorkspaceError, match="outside the project folder"):
            workspace.resolve(text)


async def test_dot_dot_is_refused_by_every_tool(project: Path, outside: Path) -> None:
    agent = await agent_for(project, approvals=ALLOW_WRITE)
    for name, arguments in (
        ("read_file", {"path": "../outside/secret.txt"}),
        ("list_files", {"path": "../outside"}),
        ("search_files", {"query": "secret", "path": "../outside"}),
        ("write_file", {"path": "../outside/new.txt", "content": "x"}),
    ):
        outcome = await call(agent, name, **arguments)
        assert outcome.is_error, name
        assert outcome.error_code == WORKSPACE_ERROR
        assert "outside the project folder" in outcome.content
    assert not (outside / "new.txt").exists()


async def test_an_outward_symlink_is_refused(project: Path, outside: Path) -> None:
    (project / "leak.txt").symlink_to(outside / "secret.txt")
    (project / "leakdir").symlink_to(outside, target_is_directory=True)
    agent = await agent_for(project, approvals=ALLOW_WRITE)

    for name, arguments in (
        ("read_file", {"path": "leak.txt"}),
        ("read_file", {"path": "leakdir/secret.txt"}),
        ("list_files", {"path": "leakdir"}),
        ("write_file", {"path": "leak.txt", "content": "overwritten"}),
        ("write_file", {"path": "leakdir/planted.txt", "content": "x"}),
    ):
        outcome = await call(agent, name, **arguments)
        assert "outside the project folder" in outcome.content, (name, arguments)
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "top secret\n"
    assert not (outside / "planted.txt").exists()

    # A search of the whole project neither follows the link nor reports the secret.
    found = result(await call(agent, "search_files", query="secret"))
    assert found["matches"] == []


async def test_a_sibling_folder_sharing_the_roots_name_prefix_is_outside(
    project: Path, evil_sibling: Path
) -> None:
    agent = await agent_for(project, approvals=ALLOW_WRITE)
    for path in ("../proj-evil/secret.txt", str(evil_sibling / "secret.txt")):
        outcome = await call(agent, "read_file", path=path)
        assert "outside the project folder" in outcome.content
    outcome = await call(agent, "write_file", path=str(evil_sibling / "x.txt"), content="x")
    assert "outside the project folder" in outcome.content
    assert not (evil_sibling / "x.txt").exists()


async def test_an_inward_symlink_is_followed(project: Path) -> None:
    (project / "alias.txt").symlink_to(project / "src" / "main.txt")
    agent = await agent_for(project)
    outcome = await call(agent, "read_file", path="alias.txt")
    assert outcome.content == "alpha\nbeta\ngamma\n"


# -- reading -----------------------------------------------------------------------------------


async def test_read_file_ranges_and_refusals(project: Path) -> None:
    (project / "bin.dat").write_bytes(b"\x89PNG\x00\x01\x02")
    agent = await agent_for(project)
    assert (await call(agent, "read_file", path="src/main.txt", offset=2, limit=1)).content == (
        "beta\n[truncated: lines 2-2 shown; call read_file with offset=3 to read on]"
    )
    assert (await call(agent, "read_file", path="src/main.txt", offset=3)).content == "gamma\n"
    beyond = await call(agent, "read_file", path="src/main.txt", offset=9)
    assert beyond.content == "[no lines: the file has 3 lines, fewer than offset=9]"
    missing = await call(agent, "read_file", path="src/nope.txt")
    assert missing.content == "Error: 'src/nope.txt' does not exist in the project folder"
    folder = await call(agent, "read_file", path="src")
    assert "is a folder; use list_files" in folder.content
    binary = await call(agent, "read_file", path="bin.dat")
    assert "looks like a binary file" in binary.content
    invalid = await call(agent, "read_file", path="src/main.txt", offset=0)
    assert invalid.error_code == FailureCode.INVALID_ARGS
    assert "offset" in invalid.content


async def test_read_file_stops_at_the_byte_budget(project: Path) -> None:
    (project / "big.txt").write_text("".join(f"line {n:04d}\n" for n in range(100)), "utf-8")
    (project / "long.txt").write_text("x" * 100 + "\n", "utf-8")
    agent = await agent_for(project, max_read_bytes=50)
    outcome = await call(agent, "read_file", path="big.txt")
    lines = outcome.content.splitlines()
    assert lines[:5] == [f"line {n:04d}" for n in range(5)]
    assert lines[5] == "[truncated: lines 1-5 shown; call read_file with offset=6 to read on]"
    long = await call(agent, "read_file", path="long.txt")
    assert long.content.startswith("x" * 50 + "\n[truncated: lines 1-1 shown")


# -- listing and searching ---------------------------------------------------------------------


async def test_list_files_flat_recursive_filtered_and_capped(project: Path) -> None:
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref", "utf-8")
    agent = await agent_for(project)
    flat = result(await call(agent, "list_files"))
    assert [(e["path"], e["type"]) for e in flat["entries"]] == [
        (".git", "folder"),
        ("README.md", "file"),
        ("src", "folder"),
    ]
    assert flat["entries"][1]["size"] == len("# Demo\nHello world\n")
    tree = result(await call(agent, "list_files", recursive=True))
    assert [e["path"] for e in tree["entries"]] == ["src", "README.md", "src/main.txt"]
    only_txt = result(await call(agent, "list_files", recursive=True, pattern="*.txt"))
    assert [e["path"] for e in only_txt["entries"]] == ["src/main.txt"]
    capped = result(await call(agent, "list_files", recursive=True, limit=2))
    assert capped["count"] == 2
    assert capped["truncated"] is True
    not_folder = await call(agent, "list_files", path="README.md")
    assert "is a file, not a folder" in not_folder.content


async def test_search_files_literal_regex_case_glob_and_limits(project: Path) -> None:
    (project / "src" / "other.md").write_text("Beta release\n", "utf-8")
    (project / "blob.bin").write_bytes(b"beta\x00beta")
    (project / "huge.txt").write_text("beta\n" * 100, "utf-8")
    agent = await agent_for(project, max_search_file_bytes=200)

    literal = result(await call(agent, "search_files", query="beta"))
    assert [(m["path"], m["line"], m["text"]) for m in literal["matches"]] == [
        ("src/main.txt", 2, "beta"),
    ]
    assert literal["files_skipped"] == 2  # the binary file and the oversized one

    folded = result(await call(agent, "search_files", query="BETA", ignore_case=True))
    assert {m["path"] for m in folded["matches"]} == {"src/main.txt", "src/other.md"}

    regex = result(await call(agent, "search_files", query=r"^(alpha|gamma)$", regex=True))
    assert [m["line"] for m in regex["matches"]] == [1, 3]

    dots = result(await call(agent, "search_files", query="a.p", path="src"))
    assert dots["matches"] == []  # literal: the dot is not a wildcard

    glob = result(await call(agent, "search_files", query="e", glob="*.md", ignore_case=True))
    assert {m["path"] for m in glob["matches"]} == {"README.md", "src/other.md"}

    capped = result(await call(agent, "search_files", query="a", max_results=2))
    assert capped["count"] == 2
    assert capped["truncated"] is True
    assert capped["stopped"] == "more than 2 matches"

    bad = await call(agent, "search_files", query="(unclosed", regex=True)
    assert bad.is_error
    assert "invalid regular expression '(unclosed'" in bad.content


# -- writing -----------------------------------------------------------------------------------


async def test_write_file_creates_replaces_and_keeps_no_temporary_files(project: Path) -> None:
    agent = await agent_for(project, approvals=ALLOW_WRITE)
    created = result(await call(agent, "write_file", path="new/deep/file.txt", content="hi\n"))
    assert created == {"path": "new/deep/file.txt", "bytes": 3, "created": True}
    target = project / "src" / "main.txt"
    target.chmod(0o640)
    replaced = result(await call(agent, "write_file", path="src/main.txt", content="é"))
    assert replaced == {"path": "src/main.txt", "bytes": 2, "created": False}
    assert target.read_text("utf-8") == "é"
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in (project / "src").iterdir()) == ["main.txt"]

    no_dirs = await call(agent, "write_file", path="absent/x.txt", content="x", create_dirs=False)
    assert "the folder 'absent' does not exist" in no_dirs.content
    folder = await call(agent, "write_file", path="src", content="x")
    assert "is a folder" in folder.content


async def test_write_file_refuses_content_over_the_limit(project: Path) -> None:
    agent = await agent_for(
        project,
        max_write_bytes=4,
        approvals=ALLOW_WRITE,
    )
    outcome = await call(agent, "write_file", path="x.txt", content="12345")
    assert "5 bytes, over the 4-byte write limit" in outcome.content
    assert not (project / "x.txt").exists()


async def test_write_file_asks_for_approval_and_a_refusal_writes_nothing(project: Path) -> None:
    agent = await agent_for(project)  # approvals: deny
    definition = agent.get(TOOLS).get("write_file")
    assert definition is not None
    assert {MUTATING, REQUIRES_APPROVAL} <= definition.tags
    outcome = await call(agent, "write_file", path="x.txt", content="x")
    assert outcome.error_code == FailureCode.APPROVAL_UNAVAILABLE
    assert "--allow write_file" in outcome.content
    assert not (project / "x.txt").exists()
    # Reading needs no approval.
    assert not (await call(agent, "read_file", path="README.md")).is_error


async def test_edit_file_replaces_one_exact_occurrence_and_refuses_ambiguity(
    project: Path, outside: Path
) -> None:
    agent = await agent_for(project, approvals=ApprovalsConfig(policy="never", allow=["edit_file"]))
    target = project / "notes.txt"
    target.write_text("alpha\nbeta\nbeta\n", encoding="utf-8")
    target.chmod(0o640)
    done = result(await call(agent, "edit_file", path="notes.txt", old_text="alpha", new_text="A"))
    assert done == {"path": "notes.txt", "replacements": 1, "bytes": 12}
    assert target.read_text("utf-8") == "A\nbeta\nbeta\n"
    assert target.stat().st_mode & 0o777 == 0o640
    twice = await call(agent, "edit_file", path="notes.txt", old_text="beta", new_text="B")
    assert twice.is_error and "occurs 2 times" in twice.content
    missing = await call(agent, "edit_file", path="notes.txt", old_text="gamma", new_text="G")
    assert missing.is_error and "was not found" in missing.content
    assert target.read_text("utf-8") == "A\nbeta\nbeta\n"
    every = await call(
        agent, "edit_file", path="notes.txt", old_text="beta", new_text="B", replace_all=True
    )
    assert result(every)["replacements"] == 2
    assert target.read_text("utf-8") == "A\nB\nB\n"
    absent = await call(agent, "edit_file", path="absent.txt", old_text="x", new_text="y")
    assert "does not exist" in absent.content
    escape = await call(
        agent, "edit_file", path="../outside/secret.txt", old_text="s", new_text="x"
    )
    assert escape.is_error


async def test_edit_file_needs_approval_like_write_file(project: Path) -> None:
    agent = await agent_for(project)  # approvals: deny
    outcome = await call(agent, "edit_file", path="README.md", old_text="a", new_text="b")
    assert outcome.error_code == FailureCode.APPROVAL_UNAVAILABLE


# -- the plugin --------------------------------------------------------------------------------


@pytest.fixture
def resolved_project(project: Path) -> Path:
    return project.resolve()


async def test_the_plugin_defaults_to_the_current_folder_and_guides_the_model(
    project: Path, resolved_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    ctx = Context()
    await ToolsPlugin().setup(ctx.fork("tools"), ToolsConfig())
    await PromptPlugin().setup(ctx.fork("prompt"), PromptConfig())
    await WorkspacePlugin().setup(ctx.fork("workspace"), WorkspaceConfig())
    assert ctx.get(WORKSPACE).root == resolved_project
    assert ctx.get(TOOLS).names() == [
        "edit_file",
        "list_files",
        "read_file",
        "search_files",
        "write_file",
    ]
    assert f"project folder {resolved_project}" in ctx.get(PROMPT).assemble(ctx)


async def test_a_read_only_workspace_has_no_write_tool(project: Path) -> None:
    agent = await agent_for(project, writable=False)
    assert "write_file" not in agent.get(TOOLS).names()
    outcome = await call(agent, "write_file", path="x.txt", content="x")
    assert outcome.error_code == FailureCode.UNKNOWN_TOOL


_DOTENV = st.tuples(
    st.sampled_from([".env", ".env.local", ".env.production", ".env.x"]).flatmap(
        lambda name: st.tuples(*(st.sampled_from([c, c.upper()]) for c in name)).map("".join)
    ),
    st.sampled_from(["", "./", "src/../", "src/./", "a/b/", "./src/", "src//"]),
    st.sampled_from(["", "/"]),
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=_DOTENV)
def test_every_spelling_of_a_dotenv_path_is_hidden(
    project: Path, parts: tuple[str, str, str]
) -> None:
    name, prefix, absolute = parts
    workspace = Workspace.open(project)
    text = f"{project}/{prefix}{name}" if absolute else f"{prefix}{name}"
    with pytest.raises(HiddenPathError, match="hidden from the file tools"):
        workspace.resolve(text)
    with pytest.raises(HiddenPathError):
        workspace.resolve(f"{text}/below")


def test_names_that_only_look_like_dotenv_are_not_hidden(project: Path) -> None:
    workspace = Workspace.open(project)
    for name in ("env", ".envrc", "x.env", ".environment", "dotenv.txt", "src/env.py"):
        assert workspace.resolve(name) == project / name
