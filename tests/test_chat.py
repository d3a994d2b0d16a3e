"""`star-harness chat`: streamed turns, commands, Ctrl-C, approvals at the terminal, Godot mode."""

from __future__ import annotations

import asyncio
import io
import json
import socket
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from session_protocol_support import KEY_VARIABLES, child_env
from starharness import composition
from starharness.cli._chat_session import ChatSession
from starharness.cli._command_profile import load_for_command
from starharness.cli._terminal_lines import QueuedLines
from starharness.cli.chat import run_chat, status_lines
from starharness.godot import GODOT_BRIDGE, GodotBridge
from starharness.godot.testing import FakeAddon
from starharness.mockllm import MockLlmServer
from starharness.runtime.config import ResolvedProfile, Runtime, start


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("STAR_HARNESS_HOME", str(home))
    monkeypatch.chdir(work)
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "game"
    folder.mkdir()
    (folder / "project.godot").write_text("[application]\n", encoding="utf-8")
    return folder


@pytest.fixture
async def mock() -> AsyncIterator[MockLlmServer]:
    async with MockLlmServer() as server:
        yield server


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def mock_patch(tmp_path: Path, base_url: str, **godot: Any) -> Path:
    """A patch file: llm at the mock, sessions in memory, and the godot row if asked."""
    rows: list[dict[str, Any]] = [
        {
            "id": "llm",
            "config": {
                "provider": "openai-compatible",
                "model": "mock-model",
                "base_url": base_url,
                "retry": {"base_delay_s": 0.001, "max_delay_s": 0.01, "jitter": 0},
            },
        },
        {"id": "sessions", "config": {"store": "memory"}},
    ]
    if godot:
        rows.append({"id": "godot", "merge": godot})
    path = tmp_path / "test.patch.yml"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


async def until(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """Wait for output the chat prints on its own (there is no event to await)."""
    for _ in range(int(timeout_s / 0.005)):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the condition did not hold in time")


@asynccontextmanager
async def started(resolved: ResolvedProfile) -> AsyncIterator[Runtime]:
    async with await start(resolved) as runtime:
        yield runtime


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"behaviour": "tool_call_success", "calls": [{"name": name, "arguments": arguments}]}


def say(text: str) -> dict[str, Any]:
    return {"behaviour": "success", "text": text}


# -- plain chat --------------------------------------------------------------------------------


async def test_chat_streams_turns_keeps_history_and_runs_commands(
    home: Path, tmp_path: Path, mock: MockLlmServer
) -> None:
    mock.script_next([say("Hi there."), say("Still here.")])
    resolved = load_for_command("chat", "task", [mock_patch(tmp_path, mock.base_url)])
    out = io.StringIO()
    lines = QueuedLines("hello", "", "/help", "again", "/status", "/bogus", "/quit", "never")
    assert await run_chat(resolved, lines, out, echo_input=True) == 0

    text = out.getvalue()
    assert text.startswith("star-harness chat, profile 'task'.")
    assert "> hello\nHi there.\n> " in text
    assert "> again\nStill here.\n" in text
    assert "/status shows the session" in text  # /help
    assert "session: chat-" in text
    assert "profile: task" in text
    assert "model: mock-model (openai-compatible)" in text
    assert "unknown command /bogus; /help lists the commands" in text
    assert "never" not in text  # /quit stopped reading
    first, second = mock.requests
    assert "hello" in json.dumps(first.messages)
    assert "Hi there." in json.dumps(second.messages)  # one session, history kept
    assert first.conversation == second.conversation


async def test_the_end_of_input_ends_the_chat(
    home: Path, tmp_path: Path, mock: MockLlmServer
) -> None:
    resolved = load_for_command("chat", "task", [mock_patch(tmp_path, mock.base_url)])
    lines = QueuedLines()
    lines.end()
    out = io.StringIO()
    assert await run_chat(resolved, lines, out) == 0
    assert out.getvalue().endswith("> \n")
    assert mock.requests == []


async def test_ctrl_c_cancels_the_running_turn_not_the_chat(
    home: Path, tmp_path: Path, mock: MockLlmServer
) -> None:
    mock.script_next(
        [
            {"behaviour": "stall", "phase": "mid_stream", "partial_text": "Thinking about"},
            say("Recovered."),
        ]
    )
    resolved = load_for_command("chat", "task", [mock_patch(tmp_path, mock.base_url)])
    out = io.StringIO()
    lines = QueuedLines()
    async with started(resolved) as runtime:
        session = ChatSession(runtime.ctx, lines, out, echo_input=True)
        chat = asyncio.create_task(session.run())
        try:
            await until(lambda: out.getvalue().endswith("> "))
            session.interrupt()  # at the prompt: only a hint
            assert "(Ctrl-D or /quit exits)\n> " in out.getvalue()

            lines.feed("take your time")
            await until(lambda: "Thinking about" in out.getvalue())
            session.interrupt()
            await until(lambda: "[turn aborted" in out.getvalue())
            assert "(cancelling the turn)" in out.getvalue()

            lines.feed("next", "/quit")
            assert await chat == 0
        finally:
            chat.cancel()
    assert "> next\nRecovered.\n" in out.getvalue()


# -- Godot mode --------------------------------------------------------------------------------


@asynccontextmanager
async def godot_chat(
    home: Path, tmp_path: Path, project: Path, mock: MockLlmServer
) -> AsyncIterator[tuple[Runtime, FakeAddon]]:
    patch = mock_patch(tmp_path, mock.base_url, base_port=free_port(), port_span=1)
    resolved = load_for_command("chat", "godot", [patch], project=project, interactive=True)
    async with started(resolved) as runtime:
        bridge: GodotBridge = runtime.ctx.get(GODOT_BRIDGE)
        fake = await FakeAddon.from_endpoint(
            bridge.settings.endpoint_file, project_path=str(project)
        )
        await fake.connect()
        try:
            assert await bridge.wait_for_editors(1, timeout_s=5)
            yield runtime, fake
        finally:
            await fake.close()


async def test_godot_mode_asks_before_writes_and_editor_changes(
    home: Path, tmp_path: Path, project: Path, mock: MockLlmServer
) -> None:
    mock.script_next(
        [
            call("godot_open_scene", {"path": "res://main.tscn"}),
            say("Not opened."),
            call("godot_open_scene", {"path": "res://main.tscn"}),
            say("Opened."),
            call("godot_open_scene", {"path": "res://main.tscn"}),
            say("Opened again."),
            call("write_file", {"path": "notes/todo.txt", "content": "fix the jump\n"}),
            say("Written."),
            call("godot_editor_info", {}),
            say("Godot 4.3."),
        ]
    )
    lines = QueuedLines(
        "open the main scene",
        "n",
        "try again",
        "maybe",
        "y",
        "and once more",
        "y",
        "write a note",
        "y",
        "which Godot?",
        "/status",
        "/quit",
    )
    out = io.StringIO()
    async with godot_chat(home, tmp_path, project, mock) as (runtime, fake):
        session = ChatSession(
            runtime.ctx,
            lines,
            out,
            echo_input=True,
            status=lambda chat: status_lines(runtime.ctx, runtime.profile, chat),
        )
        assert await session.run() == 0
        requests = [request["method"] for request in fake.requests]

    text = out.getvalue()
    assert requests == ["open_scene", "open_scene", "get_editor_info"]
    assert (project / "notes" / "todo.txt").read_text(encoding="utf-8") == "fix the jump\n"
    assert text.count("[approval] godot_open_scene") == 3  # an approval covers one call
    assert text.count("[approval] write_file") == 1
    assert "[approval] godot_editor_info" not in text
    assert "-> error: Error: the user rejected this call to godot_open_scene" in text
    assert "Please answer y, n or c." in text
    assert '-> ok: { "opened": "res://main.tscn" }' in text
    assert "Godot bridge: 127.0.0.1:" in text
    assert f"project {project}" in text  # the paired editor, in /status
    assert "tools (42):" in text  # 27 godot, 5 file, delegate, goals, read_spilled, sandbox


async def test_ctrl_c_during_an_approval_question_cancels_the_turn(
    home: Path, tmp_path: Path, project: Path, mock: MockLlmServer
) -> None:
    mock.script_next([call("godot_stop_scene", {}), say("unused"), say("Fine.")])
    lines = QueuedLines("stop the game")
    out = io.StringIO()
    async with godot_chat(home, tmp_path, project, mock) as (runtime, fake):
        session = ChatSession(runtime.ctx, lines, out, echo_input=True)
        chat = asyncio.create_task(session.run())
        try:
            await until(lambda: out.getvalue().endswith("[c] cancel: "))
            session.interrupt()
            await until(lambda: "[turn aborted" in out.getvalue())
            lines.feed("n", "/quit")  # the "n" is read by the prompt, not a stale question
            assert await chat == 0
        finally:
            chat.cancel()
        assert fake.requests == []
    assert "> n\n" in out.getvalue()


async def test_godot_mode_runs_an_approved_command_and_asks_the_user(
    home: Path, tmp_path: Path, project: Path, mock: MockLlmServer
) -> None:
    mock.script_next(
        [
            call("ask_user", {"question": "Which level?", "options": ["one", "two"]}),
            call("shell", {"command": "echo level > chosen.txt && cat chosen.txt"}),
            say("Done."),
        ]
    )
    lines = QueuedLines("set up the level", "two", "y", "/quit")
    out = io.StringIO()
    async with godot_chat(home, tmp_path, project, mock) as (runtime, _fake):
        session = ChatSession(runtime.ctx, lines, out, echo_input=True)
        assert await session.run() == 0
    text = out.getvalue()
    assert "[question] Which level? (for example: one / two)" in text
    assert "-> ok: The user answered: two" in text
    assert "[approval] shell" in text
    if "SANDBOX_UNAVAILABLE" not in text:  # a machine without bubblewrap or Landlock
        assert (project / "chosen.txt").read_text() == "level\n"
    assert "Done." in text


# -- the command -------------------------------------------------------------------------------


async def _chat_process(home: Path, stdin: str, *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "starharness.cli",
        "chat",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=child_env(home),
        cwd=home,
    )
    out, err = await asyncio.wait_for(process.communicate(stdin.encode()), timeout=60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_the_chat_command_reads_piped_lines(home: Path, mock: MockLlmServer) -> None:
    mock.script_next([say("Piped answer.")])
    code, out, err = await _chat_process(
        home,
        "hello from a pipe\n",
        "--provider",
        "openai-compatible",
        "--base-url",
        mock.base_url,
        "--model",
        "mock-model",
    )
    assert code == 0, err
    assert "> hello from a pipe\nPiped answer.\n> \n" in out


async def test_without_a_key_chat_says_which_variable_or_flag_to_set(home: Path) -> None:
    code, out, err = await _chat_process(home, "hello\n")
    assert code == 2
    assert out == ""
    assert err.startswith("error: chat needs a model: DEEPSEEK_API_KEY is not set"), err
    assert "--provider" in err and "failed to start" not in err
    assert err.count("\n") == 1


async def test_project_needs_a_profile_with_a_workspace(home: Path, tmp_path: Path) -> None:
    code, out, err = await _chat_process(home, "", "--profile", "task", "--project", str(tmp_path))
    assert code == 2
    assert out == ""
    assert err.startswith("error: chat: --project needs a workspace row")
    assert err.count("\n") == 1
    code, _, err = await _chat_process(home, "", "--profile", "godot", "--project", "/nowhere/x")
    assert code == 2
    assert err == "error: chat: --project /nowhere/x: the folder does not exist\n"


def test_llm_flags_still_apply(home: Path) -> None:
    resolved = load_for_command(
        "chat", "task", llm=composition.LlmChoice("openai", "gpt-x"), interactive=True
    )
    assert resolved.row("llm").config.model_dump(include={"provider", "model"}) == {
        "provider": "openai",
        "model": "gpt-x",
    }


# -- goals and plans ----------------------------------------------------------------------------


async def test_chat_shows_the_plan_the_model_writes(
    home: Path, tmp_path: Path, mock: MockLlmServer
) -> None:
    items = [
        {"id": "1", "text": "read the scene", "status": "done"},
        {"id": "2", "text": "fix the script", "status": "in_progress"},
    ]
    mock.script_next(
        [call("todo_write", {"items": items, "expected_revision": 0}), say("Planned.")]
    )
    patch = mock_patch(tmp_path, mock.base_url)
    rows = json.loads(patch.read_text(encoding="utf-8"))
    rows.append(
        {"id": "goals", "plugin": "starharness.runtime.context:GoalsPlugin", "before": "agents"}
    )
    patch.write_text(json.dumps(rows), encoding="utf-8")
    resolved = load_for_command("chat", "task", [patch])
    out = io.StringIO()
    lines = QueuedLines("plan it", "/plan", "/quit")
    assert await run_chat(resolved, lines, out, echo_input=True) == 0
    text = out.getvalue()
    assert "[plan] Plan (revision 1):\n  [x] 1. read the scene\n  [~] 2. fix the script" in text
    # /plan prints the plan folded from the session log.
    assert "> /plan\nPlan (revision 1):\n  [x] 1. read the scene\n  [~] 2. fix the script" in text


async def test_chat_says_when_the_context_was_compacted(
    home: Path, tmp_path: Path, mock: MockLlmServer
) -> None:
    mock.script_next(
        [say("First."), {"behaviour": "context_overflow"}, say("A summary."), say("Second.")]
    )
    patch = mock_patch(tmp_path, mock.base_url)
    rows = json.loads(patch.read_text(encoding="utf-8"))
    rows.append(
        {
            "id": "compaction",
            "plugin": "starharness.runtime.context:CompactionPlugin",
            "before": "agents",
        }
    )
    patch.write_text(json.dumps(rows), encoding="utf-8")
    resolved = load_for_command("chat", "task", [patch])
    out = io.StringIO()
    lines = QueuedLines("a long first question " * 10, "and now?", "/quit")
    assert await run_chat(resolved, lines, out, echo_input=True) == 0
    text = out.getvalue()
    assert "[context compacted: summarized, about " in text
    assert "Second." in text and "[turn error" not in text
