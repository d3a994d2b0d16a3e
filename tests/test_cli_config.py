"""`star-harness config --dump`, the placeholder commands and the CLI's one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from starharness.cli import run_cli

TASK_ROWS = ["telemetry", "sessions", "llm", "tools", "prompt", "approvals", "agents"]
KEY_VARIABLES = ("DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty STAR_HARNESS_HOME and working directory, with no provider variables set."""
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("STAR_HARNESS_HOME", str(home))
    monkeypatch.chdir(work)
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return home


def dump(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    code = run_cli(["config", "--dump", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    tree = yaml.safe_load(out)
    assert isinstance(tree, dict)
    return tree


def rows(tree: dict[str, object]) -> dict[str, dict[str, object]]:
    listed = tree["rows"]
    assert isinstance(listed, list)
    return {row["id"]: row for row in listed}


def fails(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run a command that must fail the user-error way; return its one-line message."""
    code = run_cli(list(args))
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert err.startswith("error: ")
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    return err.strip()


def test_dump_defaults_to_the_task_profile(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = dump(capsys)
    assert tree["profile"] == "task"
    assert list(rows(tree)) == TASK_ROWS
    assert rows(tree)["llm"]["plugin"] == "starharness.runtime.llm:LlmPlugin"
    assert tree["patches"] == []


@pytest.mark.parametrize("name", ["play", "serve", "task", "godot"])
def test_every_builtin_profile_resolves(
    name: str, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = dump(capsys, "--profile", name)
    assert tree["profile"] == name
    assert {"sessions", "llm", "agents"} <= set(rows(tree))


def test_patch_swaps_the_llm_row(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = rows(dump(capsys))["llm"]["config"]
    assert isinstance(before, dict)
    assert before["provider"] == "deepseek"

    patch = tmp_path / "local-llm.yml"
    patch.write_text(
        "- id: llm\n"
        "  config:\n"
        "    provider: openai-compatible\n"
        "    base_url: http://127.0.0.1:8080/v1\n"
        "    model: local-model\n",
        encoding="utf-8",
    )
    tree = dump(capsys, "--patch", str(patch))

    llm = rows(tree)["llm"]
    config = llm["config"]
    assert isinstance(config, dict)
    assert config["provider"] == "openai-compatible"
    assert config["base_url"] == "http://127.0.0.1:8080/v1"
    assert config["model"] == "local-model"
    assert llm["patched_by"] == [str(patch)]
    assert tree["patches"] == [str(patch)]
    assert list(rows(tree)) == TASK_ROWS


def test_the_user_patch_applies_before_patch_flags(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "patch.yml").write_text("- {id: llm, merge: {model: from-home}}\n", encoding="utf-8")
    llm = rows(dump(capsys))["llm"]["config"]
    assert isinstance(llm, dict) and llm["model"] == "from-home"

    flag = tmp_path / "flag.yml"
    flag.write_text("- {id: llm, merge: {model: from-flag}}\n", encoding="utf-8")
    tree = dump(capsys, "--patch", str(flag))
    llm = rows(tree)["llm"]["config"]
    assert isinstance(llm, dict) and llm["model"] == "from-flag"
    assert tree["patches"] == [str(home / "patch.yml"), str(flag)]


def test_a_profile_file_in_home_is_found_by_name(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "profiles").mkdir()
    (home / "profiles" / "mine.yml").write_text("bundles: [core, agents]\n", encoding="utf-8")
    tree = dump(capsys, "--profile", "mine")
    assert list(rows(tree)) == ["telemetry", "sessions", "llm", "tools", "prompt", "agents"]


def test_a_key_never_appears_in_a_dump(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    value = "sk-dump-test-5f1e2d3c4b5a"
    monkeypatch.setenv("DEEPSEEK_API_KEY", value)
    Path(".env").write_text(f"OPENAI_API_KEY={value}-dotenv\n", encoding="utf-8")
    private = home / "credentials.env"
    private.write_text(f"DEEPSEEK_API_KEY={value}-home\n", encoding="utf-8")
    private.chmod(0o600)
    for name in ("task", "play", "serve", "godot"):
        assert run_cli(["config", "--dump", "--profile", name]) == 0
    out, err = capsys.readouterr()
    assert value not in out + err


def test_a_key_pasted_into_a_patch_is_refused_without_echo(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    value = "sk-pasted-9a8b7c6d5e4f"
    patch = tmp_path / "oops.yml"
    patch.write_text(f"- {{id: llm, merge: {{api_key_env: {value}}}}}\n", encoding="utf-8")
    message = fails(capsys, "config", "--dump", "--patch", str(patch))
    assert "row 'llm'" in message
    assert "config.api_key_env" in message
    assert value not in message


def test_profile_errors_are_one_line(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    message = fails(capsys, "config", "--dump", "--profile", "nope")
    assert message.startswith("error: unknown profile 'nope' (known profiles: ")
    assert "task" in message
    message = fails(capsys, "config", "--dump", "--patch", "missing.yml")
    assert message == "error: patch file missing.yml does not exist"


def test_bad_flags_are_one_line(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    message = fails(capsys, "config", "--dumpp")
    assert "No such option: --dumpp" in message
    assert "star-harness config --help" in message
    assert "nothing to do" in fails(capsys, "config")
    assert "No such command" in fails(capsys, "fly")


@pytest.mark.parametrize("command", ["play", "serve"])
def test_game_commands_refuse_bad_flags_in_one_line(
    command: str, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    message = fails(capsys, command, "--anything", "goes")
    assert message.startswith("error: No such option: --anything")
    assert "\n" not in message.strip()


def test_the_installed_entry_point_and_lazy_imports(home: Path) -> None:
    """`--help` works through the real entry point without loading the runtime."""
    probe = (
        "import sys\n"
        "from starharness.cli import main\n"
        "heavy = [m for m in ('starharness.runtime.config', 'starharness.runtime.loop',"
        " 'starharness.runtime.llm', 'starharness.composition') if m in sys.modules]\n"
        "print('heavy:', heavy)\n"
        "sys.argv = ['star-harness', '--help']\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "120"},
    )
    assert done.returncode == 0, done.stderr
    assert "heavy: []" in done.stdout
    for command in ("play", "serve", "run", "config", "mock-llm"):
        assert command in done.stdout
