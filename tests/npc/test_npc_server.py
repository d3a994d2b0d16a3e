"""The server around the frames: exposure, tokens, origins, metrics, readiness, slow readers."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from pathlib import Path

import httpx
import pytest
from npc_support import Client, serving, stalled_client, start_runtime
from tinygame import GAME
from tinygame.brain import respond

from starharness.mockllm import MockLlmServer
from starharness.npc import ExposureError, LimitsSettings, ServerSettings, start_server
from starharness.npc.client import ConnectionLostError
from starharness.npc.server import is_loopback
from starharness.runtime.kernel import Context

TOKEN_ENV = "STAR_HARNESS_TEST_NPC_TOKEN"
TOKEN = "s3cret-token-of-20ch"


@pytest.fixture
def token_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    return TOKEN_ENV


async def _refused(client: Client) -> dict[str, object]:
    frame = await client.recv()
    with pytest.raises(ConnectionLostError) as closed:
        await client.recv()
    assert closed.value.code == 1008
    return frame


def test_loopback_hosts() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.20")


async def test_a_non_loopback_host_needs_a_token(tmp_path: Path) -> None:
    settings = ServerSettings(host="0.0.0.0", port=0, world=tmp_path / "w.db")
    with pytest.raises(ExposureError, match="--player-secret-env"):
        await start_server(_unused_ctx(), GAME, settings)


async def test_a_named_token_variable_must_be_set(tmp_path: Path) -> None:
    settings = ServerSettings(port=0, auth_token_env="STAR_HARNESS_TEST_UNSET_TOKEN")
    with pytest.raises(ExposureError, match="STAR_HARNESS_TEST_UNSET_TOKEN is not set"):
        await start_server(_unused_ctx(), GAME, settings)


def _unused_ctx() -> Context:
    # Refusals happen before the runtime is touched.
    return Context("unused")


async def test_a_configured_token_is_required_by_header_or_query(
    tmp_path: Path, token_env: str
) -> None:
    settings = ServerSettings(port=0, auth_token_env=token_env)
    async with serving(GAME, tmp_path, settings, responder=respond) as stack:
        async with stack.client() as anonymous:
            refusal = await _refused(anonymous)
            assert refusal["code"] == "unauthorized" and "missing" in str(refusal["message"])
        async with Client(stack.ws_url + "?token=wrong") as wrong:
            assert (await _refused(wrong))["code"] == "unauthorized"
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with stack.client(headers=headers) as bearer:
            await bearer.send({"t": "world.tick", "days": 1})
            assert (await bearer.recv())["t"] == "world.event"
        async with Client(stack.ws_url + f"?token={TOKEN}") as query:
            await query.send({"t": "hello", "playerId": "p1"})
            assert (await query.recv())["t"] == "welcome"
        async with httpx.AsyncClient(base_url=stack.running.url, trust_env=False) as http:
            assert (await http.get("/metrics")).status_code == 401
            assert (await http.get("/metrics", headers=headers)).status_code == 200
            assert (await http.get("/healthz")).status_code == 200


async def test_browser_origins_are_checked(tmp_path: Path) -> None:
    settings = ServerSettings(port=0, allow_origin=["http://localhost:5173/"])
    async with serving(GAME, tmp_path, settings) as stack:
        async with stack.client(origin="http://evil.example") as evil:
            refusal = await _refused(evil)
            assert refusal["code"] == "unauthorized" and "evil.example" in str(refusal["message"])
        own = f"http://127.0.0.1:{stack.running.port}"
        for origin in (own, "http://localhost:5173"):
            async with stack.client(origin=origin) as browser:
                await browser.send({"t": "hello", "playerId": "p1"})
                assert (await browser.recv())["t"] == "welcome"
        async with stack.client() as engine:  # no Origin: not a browser
            await engine.send({"t": "hello", "playerId": "p1"})
            assert (await engine.recv())["t"] == "welcome"


async def test_metrics_count_encounters_turns_tokens_and_errors(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path, responder=respond) as stack, stack.client() as client:
        await client.open("e1", "n-baker", "p1")
        await client.say("e1", "one")
        await client.say("e1", "two")
        await client.send({"t": "encounter.say", "id": "nope", "text": "x"})
        assert (await client.recv())["code"] == "unknown_encounter"
        async with httpx.AsyncClient(base_url=stack.running.url, trust_env=False) as http:
            text = (await http.get("/metrics")).text
        values = _samples(text, stack.running.server.metrics.worker)
        assert stack.running.server.metrics.worker == f"{socket.gethostname()}:{os.getpid()}"
        assert values["star_harness_npc_open_encounters"] == 1
        assert values["star_harness_npc_connections"] == 1
        assert values['star_harness_npc_turn_seconds_count{reason="completed"}'] == 2
        assert values['star_harness_npc_tokens_total{kind="input"}'] > 0
        assert values['star_harness_npc_tokens_total{kind="cache_read"}'] > 0
        assert 0 < values["star_harness_npc_cache_hit_share"] < 1
        assert values['star_harness_npc_errors_total{code="unknown_encounter"}'] == 1


def _samples(text: str, worker: str) -> dict[str, float]:
    """Samples by name and labels, the `worker` label (which every sample must carry) removed."""
    samples: dict[str, float] = {}
    mark = f'worker="{worker}"'
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            assert mark in name, line
            name = (
                name.replace("," + mark, "").replace(mark + ",", "").replace("{" + mark + "}", "")
            )
            samples[name] = float(value)
    return samples


async def test_the_ready_file_is_written_once_healthz_answers(tmp_path: Path) -> None:
    ready = tmp_path / "run" / "ready.json"
    async with MockLlmServer() as mock:
        ctx = await start_runtime(mock.base_url)
        settings = ServerSettings(port=0, ready_file=ready, world=tmp_path / "w.db")
        running = await start_server(ctx, GAME, settings)
        try:
            written = json.loads(ready.read_text(encoding="utf-8"))
            assert written["pid"] == os.getpid()
            assert written["url"] == running.url and running.port != 0
            async with httpx.AsyncClient(trust_env=False) as http:
                assert (await http.get(written["url"] + "/healthz")).json()["ok"] is True
        finally:
            await running.stop()
            await ctx.dispose()


async def test_a_client_that_stops_reading_is_dropped_and_others_carry_on(
    tmp_path: Path,
) -> None:
    limits = LimitsSettings(send_queue_frames=16, send_timeout_s=5.0)
    settings = ServerSettings(port=0, limits=limits)
    async with serving(GAME, tmp_path, settings) as stack:
        stack.world.headline_size = 60_000
        server = stack.running.server
        slow = await stalled_client(stack.running.port)
        try:
            async with stack.client() as fast:
                await fast.send({"t": "hello", "playerId": "p1"})
                assert (await fast.recv())["t"] == "welcome"
                ticks = 0
                async with asyncio.timeout(30):
                    while len(server.connections) == 2:
                        ticks += 1
                        await fast.send({"t": "world.tick", "days": 10})
                        frames = await fast.until(lambda f: f["t"] == "hud")
                        assert [f["t"] for f in frames] == ["world.event"] * 10 + ["hud"]
                (dropped,) = [c for c in _dropped(server.metrics.render())]
                assert dropped == 1.0
                await fast.send({"t": "world.tick", "days": 1})
                assert (await fast.recv())["t"] == "world.event"
                assert ticks > 1
        finally:
            slow.close()


def _dropped(metrics: bytes) -> list[float]:
    samples = _samples(metrics.decode(), f"{socket.gethostname()}:{os.getpid()}")
    return [samples["star_harness_npc_dropped_connections_total"]]
