"""`play` and `serve` as real processes: health, the web root or its absence, an encounter."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from starharness.npc.client import connect

_START_TIMEOUT_S = 60


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["STAR_HARNESS_HOME"] = str(home)
    return env


class Served:
    def __init__(self, proc: subprocess.Popen[str], ready: dict[str, str]) -> None:
        self.proc = proc
        self.url = ready["url"]
        self.ws = ready["ws"]


@pytest.fixture(params=["play", "serve"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Served]]:
    command: str = request.param
    ready_file = tmp_path / "ready.json"
    started = time.perf_counter()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "starharness.cli",
            command,
            "--port",
            "0",
            "--ready-file",
            str(ready_file),
        ],
        env=_env(tmp_path / "home"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        while not ready_file.exists():
            if proc.poll() is not None:
                pytest.fail(f"{command} exited early: {proc.stdout.read() if proc.stdout else ''}")
            if time.perf_counter() - started > _START_TIMEOUT_S:
                pytest.fail(f"{command} did not become ready")
            time.sleep(0.02)
        print(f"{command}: /healthz answered {time.perf_counter() - started:.2f} s after start")
        yield command, Served(proc, json.loads(ready_file.read_text()))
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0, out
        assert "Traceback" not in out
        assert "stopping" in out


def test_health_web_root_and_an_encounter(served: tuple[str, Served]) -> None:
    command, server = served
    health = httpx.get(server.url + "/healthz", timeout=5)
    assert health.status_code == 200
    assert health.json()["ok"] is True
    index = httpx.get(server.url + "/", timeout=5)
    assert index.status_code == (200 if command == "play" else 404)
    if command == "play":
        assert "<html" in index.text.lower()
    welcome, seen = asyncio.run(_welcome_and_greeting(server.ws))
    assert welcome["t"] == "welcome"
    assert any(n["id"] == "npc-karsk" for n in welcome["npcs"])
    kinds = [f["t"] for f in seen]
    assert kinds[0] == "encounter.opened"
    assert "say.delta" in kinds
    assert "options" in kinds
    line = "".join(str(f["text"]) for f in seen if f["t"] == "say.delta")
    assert len(line) > 10


async def _welcome_and_greeting(url: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The `welcome` frame, then every frame of Karsk's greeting up to its `encounter.idle`."""
    async with connect(url, open_timeout=10) as ws:
        await ws.hello("player-1")
        welcome = json.loads(await ws.receive_text(10))
        await ws.open_encounter("e1", "npc-karsk", "player-1")
        seen: list[dict[str, Any]] = []
        while not any(f["t"] == "encounter.idle" for f in seen):
            seen.append(json.loads(await ws.receive_text(30)))
        return welcome, seen


def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "starharness.cli", "serve", "--port", str(port)],
            env=_env(tmp_path / "home"),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "in use" in lines[0].lower()
    assert str(port) in lines[0]


def test_an_explicit_provider_without_its_key_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "starharness.cli", "serve", "--port", "0", "--provider", "deepseek"],
        env=_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert "DEEPSEEK_API_KEY" in result.stderr
