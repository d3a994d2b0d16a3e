"""`star-harness mock-llm` as a real process, and its argument errors."""

import asyncio
import os
import signal
import socket
import sys
from pathlib import Path

import httpx
import pytest
import typer
from typer.testing import CliRunner

from starharness.cli._errors import CliError
from starharness.cli.mock_llm import register

_LAUNCH = (
    "import typer\n"
    "from starharness.cli.mock_llm import register\n"
    "app = typer.Typer()\n"
    "register(app)\n"
    "app.callback()(lambda: None)\n"
    "app()\n"
)

_BRAIN = """
from starharness.mockllm import ChatRequest, Success

def respond(request: ChatRequest) -> Success:
    return Success(text=f"brain heard {request.last_user_text()} in {request.conversation}")
"""


def _app() -> typer.Typer:
    app = typer.Typer()
    register(app)
    app.callback()(lambda: None)
    return app


async def _start(*args: str, env: dict[str, str]) -> tuple[asyncio.subprocess.Process, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _LAUNCH,
        "mock-llm",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    assert process.stdout is not None
    async with asyncio.timeout(30):
        while True:
            line = (await process.stdout.readline()).decode()
            if not line:
                stderr = await process.stderr.read() if process.stderr else b""
                pytest.fail(f"mock-llm exited early: {stderr.decode()}")
            if line.startswith("DEEPSEEK_BASE_URL="):
                return process, line.split("=", 1)[1].strip()


async def _stop(process: asyncio.subprocess.Process) -> tuple[int, str, str]:
    process.send_signal(signal.SIGINT)
    stdout, stderr = await asyncio.wait_for(process.communicate(), timeout=20)
    assert process.returncode is not None
    return process.returncode, stdout.decode(), stderr.decode()


async def test_cli_serves_script_responder_and_key_until_ctrl_c(tmp_path: Path) -> None:
    (tmp_path / "offline_brain.py").write_text(_BRAIN, encoding="utf-8")
    script = tmp_path / "script.yaml"
    script.write_text("sessions:\n  npc-1:\n    - behaviour: success\n      text: scripted\n")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
        "MOCK_TEST_KEY": "sk-cli",
    }
    process, base_url = await _start(
        "--script",
        str(script),
        "--responder",
        "offline_brain:respond",
        "--api-key-env",
        "MOCK_TEST_KEY",
        env=env,
    )
    try:
        headers = {"Authorization": "Bearer sk-cli"}
        body = {"model": "m", "messages": [{"role": "user", "content": "ahoy"}]}
        async with httpx.AsyncClient(timeout=10) as client:
            refused = await client.post(f"{base_url}/chat/completions", json=body)
            scripted = await client.post(
                f"{base_url}/chat/completions",
                json=body,
                headers={**headers, "X-Star-Harness-Session": "npc-1"},
            )
            brained = await client.post(
                f"{base_url}/chat/completions",
                json=body,
                headers={**headers, "X-Star-Harness-Session": "npc-2"},
            )
    finally:
        code, stdout, stderr = await _stop(process)

    assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
    assert refused.status_code == 401
    assert scripted.json()["choices"][0]["message"]["content"] == "scripted"
    assert brained.json()["choices"][0]["message"]["content"] == "brain heard ahoy in npc-2"
    assert code == 0
    assert "Traceback" not in stderr
    assert "stopped" in stdout


async def test_cli_behaviours_give_each_conversation_a_copy() -> None:
    process, base_url = await _start(
        "--behaviours", "rate_limit,success", "--repeat-last", env=dict(os.environ)
    )
    try:
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        async with httpx.AsyncClient(timeout=10) as client:
            statuses = [
                (
                    await client.post(
                        f"{base_url}/chat/completions",
                        json=body,
                        headers={"X-Star-Harness-Session": session},
                    )
                ).status_code
                for session in ("a", "a", "b", "a")
            ]
    finally:
        code, _, stderr = await _stop(process)

    assert statuses == [429, 200, 429, 200]
    assert code == 0
    assert "Traceback" not in stderr


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--script", "x.yaml", "--behaviours", "success"], "not both"),
        (["--behaviours", "success,sucess"], "sucess"),
        (["--api-key-env", "MOCK_SURELY_UNSET_VARIABLE"], "MOCK_SURELY_UNSET_VARIABLE"),
        (["--host", "0.0.0.0"], "--api-key-env"),
        (["--responder", "no_such_module_anywhere:f"], "no_such_module_anywhere"),
        (["--responder", "json"], "module:attr"),
        (["--responder", "json:nothing_here"], "nothing_here"),
        (["--script", "/nonexistent/script.yaml"], "cannot read"),
    ],
)
def test_cli_argument_errors_are_named(args: list[str], fragment: str) -> None:
    result = CliRunner().invoke(_app(), ["mock-llm", *args])

    # CliError is what the star-harness entry point prints as one line with exit code 2.
    assert isinstance(result.exception, CliError)
    assert fragment in str(result.exception)


def test_cli_port_in_use_is_a_clear_error() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result = CliRunner().invoke(_app(), ["mock-llm", "--port", str(port)])

    assert isinstance(result.exception, CliError)
    assert "cannot listen" in str(result.exception)
