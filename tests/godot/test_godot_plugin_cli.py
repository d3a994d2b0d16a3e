"""`star-harness run --profile godot`: one headless task through the bridge to a fake editor."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from godot_support import PORT_SPAN, free_base_port

from starharness.cli._command_profile import load_for_command
from starharness.cli._errors import CliError
from starharness.godot import endpoint_path
from starharness.godot.bridge import read_endpoint
from starharness.godot.testing import FakeAddon
from starharness.mockllm import MockLlmServer

SETTING = {"key": "application/config/name", "value": "Demo"}
KEY_VARIABLES = ("DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL")


@pytest.fixture
def user_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("STAR_HARNESS_HOME", str(home))
    return home


def patch_file(tmp_path: Path, base_url: str) -> Path:
    rows: list[dict[str, Any]] = [
        {"id": "sessions", "config": {"store": "memory"}},
        {
            "id": "godot",
            "merge": {
                "base_port": free_base_port(),
                "port_span": PORT_SPAN,
                # The model asks for the editor at once; give the fake time to pair.
                "grace_period_ms": 20_000,
            },
        },
    ]
    path = tmp_path / "run.patch.yml"
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


async def pair_when_published(home: Path, pid: int, project: Path) -> FakeAddon:
    path = endpoint_path(home)
    for _ in range(4000):
        endpoint = (await asyncio.to_thread(read_endpoint, path)).endpoint
        if endpoint is not None and endpoint.pid == pid:
            break
        await asyncio.sleep(0.005)
    fake = await FakeAddon.from_endpoint(path, project_path=str(project))
    await fake.connect()
    return fake


@pytest.fixture
def resolved_project(project: Path) -> Path:
    return project.resolve()


async def test_run_with_the_godot_profile_reaches_the_editor(
    home: Path, project: Path, resolved_project: Path, tmp_path: Path
) -> None:
    async with MockLlmServer() as mock:
        mock.script_next(
            [
                {
                    "behaviour": "tool_call_success",
                    "calls": [{"name": "godot_editor_info", "arguments": {}}],
                },
                {
                    "behaviour": "tool_call_success",
                    "calls": [
                        {
                            "name": "godot_set_project_setting",
                            "arguments": {"key": "a/b", "value": 1},
                        }
                    ],
                },
                {"behaviour": "success", "text": "The editor runs Godot 4.3."},
            ]
        )
        env = {k: v for k, v in os.environ.items() if k not in KEY_VARIABLES}
        env["STAR_HARNESS_HOME"] = str(home)
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "starharness.cli",
            "run",
            "Which Godot version is open?",
            "--profile",
            "godot",
            "--project",
            str(project),
            "--patch",
            str(patch_file(tmp_path, mock.base_url)),
            "--provider",
            "openai-compatible",
            "--base-url",
            mock.base_url,
            "--model",
            "mock-model",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=tmp_path,
        )
        fake = await pair_when_published(home, process.pid, project)
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout=60)
        finally:
            await fake.close()
        system = mock.requests[0].messages[0]["content"]
    assert process.returncode == 0, err.decode()
    assert out.decode() == "The editor runs Godot 4.3.\n"
    log = err.decode()
    assert "[tool] godot_editor_info -> ok:" in log
    assert (
        "[tool] godot_set_project_setting -> error: Error: godot_set_project_setting needs" in log
    )
    assert "--allow godot_set_project_setting" in log
    assert [r["method"] for r in fake.requests] == ["get_editor_info"]
    assert "You are a Godot 4 development agent" in system  # the persona
    assert f"project folder {resolved_project}" in system


def test_project_patches_the_workspace_row(user_home: Path, project: Path) -> None:
    resolved = load_for_command(
        "run", "godot", project=project, allow=["write_file", "godot_stop_scene"]
    )
    workspace = resolved.row("workspace")
    assert workspace.config.model_dump()["root"] == str(project.resolve())
    assert workspace.patched_by == ("run --project",)
    assert resolved.row("approvals").config.model_dump() == {
        "policy": "never",
        "allow": ["write_file", "godot_stop_scene"],
    }
    assert resolved.row("godot").config.model_dump()["workspace"] is None  # follows the row
    assert "agents" in [row.id for row in resolved.rows]


def test_chat_asks_and_mcp_has_no_agent_loop(user_home: Path, project: Path) -> None:
    chat = load_for_command("chat", "godot", interactive=True)
    assert chat.row("approvals").config.model_dump() == {"policy": "ask", "allow": []}
    assert chat.row("approvals").patched_by == ("chat (asks at the terminal)",)
    run = load_for_command("run", "godot")
    assert run.row("approvals").config.model_dump()["policy"] == "never"

    served = load_for_command("mcp", "godot", project=project, tools_only=True)
    ids = [row.id for row in served.rows]
    assert "agents" not in ids and "llm" not in ids
    assert {"tools", "approvals", "workspace", "godot"} <= set(ids)


def test_project_must_be_a_folder_of_a_profile_with_a_workspace(
    user_home: Path, project: Path
) -> None:
    with pytest.raises(CliError, match="profile 'task' has none; use --profile godot"):
        load_for_command("run", "task", project=project)
    with pytest.raises(CliError, match="the folder does not exist"):
        load_for_command("run", "godot", project=project / "missing")
    file = project / "file.txt"
    file.write_text("x", encoding="utf-8")
    with pytest.raises(CliError, match="not a folder"):
        load_for_command("run", "godot", project=file)
