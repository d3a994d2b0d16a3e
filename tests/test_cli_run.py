"""`star-harness run`: flags become patches; errors are one line; a real run over HTTP."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

from session_protocol_support import KEY_VARIABLES, call, child_env, say
from starharness import composition
from starharness.cli import run_cli
from starharness.mockllm import MockLlmServer


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


def one_line_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = run_cli(list(args))
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err.strip()


def test_provider_flags_patch_the_llm_row(home: Path) -> None:
    profile = composition.load(
        "task", llm=composition.LlmChoice("openai-compatible", "m-1", "http://127.0.0.1:1/v1")
    )
    llm = profile.row("llm")
    assert llm.config.model_dump(include={"provider", "model", "base_url"}) == {
        "provider": "openai-compatible",
        "model": "m-1",
        "base_url": "http://127.0.0.1:1/v1",
    }
    assert llm.patched_by == ("--provider/--model/--base-url",)


def test_a_new_provider_drops_the_old_providers_model_url_and_key_name(
    home: Path, tmp_path: Path
) -> None:
    patch = tmp_path / "ds.yml"
    patch.write_text(
        "- {id: llm, merge: {model: ds-model, base_url: 'http://x/v1', api_key_env: MY_DS,"
        " max_tokens: 99}}\n",
        encoding="utf-8",
    )
    config = (
        composition.load("task", [patch], llm=composition.LlmChoice(provider="openai"))
        .row("llm")
        .config.model_dump()
    )
    assert config["provider"] == "openai"
    assert (config["model"], config["base_url"], config["api_key_env"]) == (None, None, None)
    assert config["max_tokens"] == 99  # not provider-specific, kept

    only_model = composition.load("task", [patch], llm=composition.LlmChoice(model="other"))
    kept = only_model.row("llm").config.model_dump()
    assert (kept["model"], kept["base_url"], kept["api_key_env"]) == (
        "other",
        "http://x/v1",
        "MY_DS",
    )


def test_allow_flags_patch_the_approvals_row(home: Path) -> None:
    approvals = composition.load("task", allow=["write_file", "shell", "write_file"]).row(
        "approvals"
    )
    assert approvals.config.model_dump() == {"policy": "never", "allow": ["write_file", "shell"]}
    untouched = composition.load("task").row("approvals").config.model_dump()
    assert untouched == {"policy": "never", "allow": []}


def test_bad_arguments(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert one_line_error(capsys, "run", "   ") == "error: run: the task is empty"
    assert "Missing argument 'TASK'" in one_line_error(capsys, "run")
    assert "requires an argument" in one_line_error(capsys, "run", "x", "--model")
    message = one_line_error(capsys, "run", "x", "--provider", "nonsense")
    assert "row 'llm'" in message
    assert "config.provider" in message
    assert "unknown provider" in message


def test_a_missing_key_is_one_line_naming_the_variable(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    message = one_line_error(capsys, "run", "hello")
    # Plainly what to set, not which plugin row failed to start.
    assert message.startswith("error: run needs a model: DEEPSEEK_API_KEY is not set"), message
    assert "row 'llm'" not in message and "failed to start" not in message
    assert "--provider" in message and "--base-url" in message
    openai = one_line_error(capsys, "run", "hello", "--provider", "openai")
    assert openai.startswith("error: run needs a model: OPENAI_API_KEY is not set"), openai


def test_a_world_readable_credentials_file_is_refused(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    private = home / "credentials.env"
    private.write_text("DEEPSEEK_API_KEY=sk-should-not-show-1234\n", encoding="utf-8")
    private.chmod(0o644)
    message = one_line_error(capsys, "run", "hello")
    assert "chmod 600" in message
    assert "sk-should-not-show-1234" not in message


def _at_mock(mock: MockLlmServer) -> tuple[str, ...]:
    """The flags that point a command at the mock LLM server."""
    return ("--provider", "openai-compatible", "--base-url", mock.base_url, "--model", "mock-model")


async def _run_cli_process(home: Path, *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "starharness.cli",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=child_env(home),
        cwd=home,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def test_run_streams_the_answer_against_a_real_server(home: Path) -> None:
    async with MockLlmServer() as mock:
        mock.script_next([{"behaviour": "success", "text": "Forty-two, streamed."}])
        code, out, err = await _run_cli_process(
            home,
            "run",
            "What is the answer?",
            *_at_mock(mock),
        )
        assert code == 0, err
        assert out == "Forty-two, streamed.\n"
        (request,) = mock.requests
        assert "What is the answer?" in str(request)
    assert (home / "sessions.db").is_file()  # the task profile logs to $STAR_HARNESS_HOME


async def test_run_exits_non_zero_when_the_turn_fails(home: Path) -> None:
    async with MockLlmServer() as mock:
        mock.script_next([{"behaviour": "invalid_request", "message": "no such thing (mock)"}])
        code, out, err = await _run_cli_process(
            home,
            "run",
            "hi",
            *_at_mock(mock),
        )
    assert code == 1
    assert out == ""
    assert "no such thing (mock)" in err


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
async def test_the_seed_shape_runs_a_headless_task_that_edits_a_file_and_runs_a_test(
    home: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    (project / "test_calc.py").write_text(
        "from calc import add\nassert add(2, 3) == 5\nprint('1 passed')\n", encoding="utf-8"
    )
    edit = {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"}
    async with MockLlmServer() as mock:
        mock.script_next(
            [
                call("edit_file", edit),
                call("shell", {"command": "python3 test_calc.py"}),
                say("Fixed."),
            ]
        )
        code, out, err = await _run_cli_process(
            home,
            "--profile",
            "headless",
            "--project",
            str(project),
            "--allow",
            "edit_file",
            "--allow",
            "shell",
            *_at_mock(mock),
            "fix the failing test",
        )
        mock.assert_complete()
    assert code == 0, err
    assert out == "Fixed.\n"
    assert (project / "calc.py").read_text(encoding="utf-8").endswith("return a + b\n")
    assert "[tool] shell -> ok" in err and "1 passed" in err


async def test_without_allow_the_headless_agent_is_refused_a_write(home: Path) -> None:
    (Path.cwd() / "notes.txt").write_text("old\n", encoding="utf-8")
    edit = {"path": "notes.txt", "old_text": "old", "new_text": "new"}
    async with MockLlmServer() as mock:
        mock.script_next([call("edit_file", edit), say("I could not.")])
        code, _, err = await _run_cli_process(
            home,
            "run",
            "change the notes",
            "--project",
            str(Path.cwd()),
            *_at_mock(mock),
        )
    assert code == 0, err
    assert "--allow edit_file" in err
    assert (Path.cwd() / "notes.txt").read_text(encoding="utf-8") == "old\n"
