"""`play`/`serve` failures name the part that failed in the user's terms, with the fix."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from starharness.npc.client import connect

START_S = 60.0


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["STAR_HARNESS_HOME"] = str(tmp_path / "home")
    env.update(extra)
    return env


def _run(tmp_path: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "starharness.cli", *args],
        cwd=tmp_path,
        env=_env(tmp_path, **extra),
        capture_output=True,
        text=True,
        timeout=120,
    )


def _one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "row '" not in lines[0], "the user does not know the profile's rows"
    return lines[0]


def test_a_bad_game_module_is_named_as_such(tmp_path: Path) -> None:
    line = _one_line(_run(tmp_path, "play", "--port", "0", "--game", "nosuch:GAME"))
    assert line.startswith("error: play: the game module (--game nosuch:GAME): cannot import")
    assert "--game ./nosuch:GAME" in line


def test_a_broken_world_file_is_named_with_the_fix(tmp_path: Path) -> None:
    broken = tmp_path / "broken.db"
    broken.write_text("this is not a database")
    line = _one_line(_run(tmp_path, "serve", "--port", "0", "--world", str(broken)))
    assert f"the world file {broken}" in line
    assert f"star-harness seed --world {broken}" in line


def test_a_world_in_a_missing_folder_is_refused_and_nothing_is_made(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "dir" / "w.db"
    line = _one_line(_run(tmp_path, "serve", "--port", "0", "--world", str(missing)))
    assert "does not exist" in line and str(missing.parent) in line
    assert not (tmp_path / "no").exists()
    line = _one_line(_run(tmp_path, "play", "--port", "0", "--world", str(missing)))
    assert "does not exist" in line
    assert not (tmp_path / "no").exists()


def test_a_world_name_too_long_for_the_file_system_is_one_short_line(tmp_path: Path) -> None:
    long = "d" * 5000 + ".db"
    line = _one_line(_run(tmp_path, "play", "--port", "0", "--world", long))
    assert "cannot be used: File name too long" in line
    assert len(line) < 300, "the name is shortened, not echoed whole"


def test_a_port_in_use_suggests_port_zero(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        line = _one_line(_run(tmp_path, "serve", "--port", str(port)))
    assert "--port 0" in line


def _start(
    tmp_path: Path, *args: str, **extra: str
) -> tuple[subprocess.Popen[str], dict[str, str]]:
    ready = tmp_path / "ready.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "starharness.cli", *args, "--ready-file", str(ready)],
        cwd=tmp_path,
        env=_env(tmp_path, **extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started = time.monotonic()
    while not ready.exists():
        if proc.poll() is not None or time.monotonic() - started > START_S:
            proc.kill()
            out, err = proc.communicate(timeout=30)
            raise AssertionError(f"did not start: {out}{err}")
        time.sleep(0.05)
    return proc, json.loads(ready.read_text())


def _stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, out + err
    return out, err


def test_the_ready_file_goes_when_the_server_stops(tmp_path: Path) -> None:
    proc, ready = _start(tmp_path, "serve", "--port", "0")
    assert ready["pid"] == proc.pid
    _stop(proc)
    assert not (tmp_path / "ready.json").exists()


def test_an_unreachable_model_is_logged_and_named_at_start(tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    args = ("serve", "--port", "0", "--provider", "openai-compatible", "--base-url", dead)
    proc, ready = _start(tmp_path, *args, "--model", "some-model")
    try:
        assert asyncio.run(_error_codes_of_a_greeting(ready["ws"])) == ["llm_unavailable"]
    finally:
        out, err = _stop(proc)
    assert f"brain      openai-compatible / some-model at {dead}" in out
    # The player's frame says only "try again" (issue 19); the operator's log names the
    # encounter, the code and the cause, with the model's URL.
    assert "encounter e1: the turn ended with llm_unavailable" in err and dead in err


async def _error_codes_of_a_greeting(url: str) -> list[str]:
    async with connect(url, open_timeout=10) as ws:
        await ws.hello("player-1")
        json.loads(await ws.receive_text(30))
        await ws.open_encounter("e1", "npc-karsk", "player-1")
        codes: list[str] = []
        while True:
            frame = json.loads(await ws.receive_text(60))
            if frame["t"] == "error":
                codes.append(frame["code"])
            if frame["t"] == "encounter.idle":
                return codes


def test_the_brain_line_names_the_default_model(tmp_path: Path) -> None:
    proc, _ = _start(tmp_path, "serve", "--port", "0", DEEPSEEK_API_KEY="not-a-real-key")
    out, _ = _stop(proc)
    assert "brain      deepseek / deepseek-v4-flash (the provider's default)" in out


def test_a_password_in_a_world_url_is_refused_without_repeating_it(tmp_path: Path) -> None:
    url = "postgresql://star:hunter2secret@127.0.0.1:5432/world"
    for command in ("serve", "play"):
        line = _one_line(_run(tmp_path, command, "--port", "0", "--world", url))
        assert "password" in line and "hunter2secret" not in line


def test_a_world_password_variable_needs_a_database_url(tmp_path: Path) -> None:
    world = tmp_path / "world.db"
    args = ("--port", "0", "--world", str(world), "--world-password-env", "STAR_DB")
    line = _one_line(_run(tmp_path, "serve", *args))
    assert "--world-password-env is for a postgresql:// --world" in line
    assert not world.exists()


def test_world_connections_need_a_database_url(tmp_path: Path) -> None:
    world = tmp_path / "world.db"
    for args in (("--world", str(world)), ()):
        line = _one_line(_run(tmp_path, "serve", "--port", "0", "--world-connections", "4", *args))
        assert "--world-connections is for a postgresql:// --world" in line
    assert not world.exists()
    line = _one_line(_run(tmp_path, "serve", "--world-connections", "0"))
    assert "--world-connections" in line and "greater than or equal to 1" in line


def test_an_unreachable_world_database_is_named_host_port_db_only(tmp_path: Path) -> None:
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    url = f"postgresql://someuser@127.0.0.1:{port}/world"
    line = _one_line(_run(tmp_path, "serve", "--port", "0", "--world", url))
    assert f"the world database postgresql://127.0.0.1:{port}/world" in line
    assert "--world-password-env" in line
    assert "is the PostgreSQL server running" in line
    # Seeding erases a world: never the advice for a server that did not answer.
    assert "seed" not in line and "erase" not in line
