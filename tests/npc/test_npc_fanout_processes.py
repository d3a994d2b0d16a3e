"""Real `serve` processes sharing one world file and one PostgreSQL bus (`--fanout`)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from npc_support import Client

from pg_support import PASSWORD_VARIABLE
from starharness.runtime.session.postgres import PostgresTarget

_START_TIMEOUT_S = 60
_TOKEN_ENV = "STAR_HARNESS_TEST_SERVER_TOKEN"
_TOKEN = "a-server-token-of-32-characters!"
_AUTH = {"Authorization": f"Bearer {_TOKEN}"}
_HERE = Path(__file__).parent


def _serve(tmp_path: Path, target: PostgresTarget, worker: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["STAR_HARNESS_HOME"] = str(tmp_path / "home")
    env[_TOKEN_ENV] = _TOKEN
    env["PYTHONPATH"] = os.pathsep.join([str(_HERE), env.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "starharness.cli",
            "serve",
            "--game",
            "tinygame:GAME",
            "--offline",
            "--world",
            str(tmp_path / "world.db"),
            "--port",
            "0",
            "--ready-file",
            str(tmp_path / f"{worker}.json"),
            "--fanout",
            target.url,
            "--fanout-password-env",
            PASSWORD_VARIABLE,
            "--worker-id",
            worker,
            "--auth-token-env",
            _TOKEN_ENV,
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture
def two_workers(tmp_path: Path, pg_target: PostgresTarget) -> Iterator[list[dict[str, Any]]]:
    procs: list[subprocess.Popen[str]] = []
    try:
        ready: list[dict[str, Any]] = []
        for worker in ("w1", "w2"):
            proc = _serve(tmp_path, pg_target, worker)
            procs.append(proc)
            path = tmp_path / f"{worker}.json"
            started = time.monotonic()
            while not path.exists():
                if proc.poll() is not None:
                    pytest.fail(f"serve exited early: {proc.stdout.read() if proc.stdout else ''}")
                if time.monotonic() - started > _START_TIMEOUT_S:
                    pytest.fail("serve did not become ready")
                time.sleep(0.02)
            ready.append(json.loads(path.read_text()))
        yield ready
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            out, _ = proc.communicate(timeout=30)
            assert proc.returncode == 0, out
            assert "Traceback" not in out, out
            assert "fan-out over postgresql://" in out, out


async def _until_ready(url: str, worker: str) -> None:
    async with httpx.AsyncClient(base_url=url, trust_env=False) as http:
        for _ in range(500):
            ready = await http.get("/readyz")
            if ready.status_code == 200:
                assert ready.json() == {"ready": True, "worker": worker}
                return
            assert ready.status_code == 503 and "LISTEN" in ready.json()["reason"]
            await asyncio.sleep(0.02)
    pytest.fail(f"{url}/readyz never answered 200")


async def test_serve_processes_share_news_and_huds(two_workers: list[dict[str, Any]]) -> None:
    first, second = two_workers
    await _until_ready(first["url"], "w1")
    await _until_ready(second["url"], "w2")
    # The server token is privileged: it may tick (players may not, under `serve`).
    async with (
        Client(first["ws"], headers=_AUTH) as trader,
        Client(second["ws"], headers=_AUTH) as watcher,
    ):
        await watcher.send({"t": "hello", "playerId": "p1"})
        assert (await watcher.recv())["hud"]["coins"] == 20
        await trader.send({"t": "world.tick", "days": 1})
        frames = await watcher.until(lambda f: f["t"] == "world.event")
        assert [f["headline"] for f in frames if f["t"] == "world.event"] == ["Day 2 dawns."]
        await trader.open("e1", "n-baker", "p1")
        await trader.say("e1", "buy 1")
        huds = await watcher.until(lambda f: f["t"] == "hud" and f["data"]["coins"] == 17)
        assert huds[-1]["data"]["loaves"] == 1
    async with httpx.AsyncClient(base_url=second["url"], trust_env=False) as http:
        metrics = (await http.get("/metrics", headers=_AUTH)).text
    assert 'star_harness_npc_connections{worker="w2"} 0.0' in metrics
