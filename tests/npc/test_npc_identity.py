"""Who is who, through the real server and real WebSockets: player tokens, Host, world clock."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from npc_support import Client, eventually, serving
from tinygame import GAME
from tinygame.brain import respond

from raw_http_support import raw_status
from starharness.npc import ExposureError, LimitsSettings, ServerSettings, start_server
from starharness.npc.client import ConnectionLostError
from starharness.npc.identity import PlayerTokens, mint_player_token
from starharness.npc.server.settings import IdentitySettings, TickSettings
from starharness.runtime.kernel import Context

SECRET_ENV = "STAR_HARNESS_TEST_PLAYER_SECRET"
SECRET = "a-player-token-secret-of-forty-characters"
SERVER_ENV = "STAR_HARNESS_TEST_SERVER_TOKEN"
SERVER_TOKEN = "the-game-servers-own-token"


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)
    monkeypatch.setenv(SERVER_ENV, SERVER_TOKEN)


def _settings(**update: object) -> ServerSettings:
    base = ServerSettings(port=0, identity=IdentitySettings(secret_env=SECRET_ENV))
    return base.model_copy(update=update)


def _token(player: str, **kwargs: object) -> str:
    return mint_player_token(SECRET, player, **kwargs)  # type: ignore[arg-type]


def _day(stack: object) -> int:
    return int(stack.world.player_view("p1")["day"])  # type: ignore[attr-defined]


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def _refused(client: Client) -> dict[str, object]:
    frame = await client.recv()
    with pytest.raises(ConnectionLostError) as closed:
        await client.recv()
    assert closed.value.code == 1008
    return frame


async def test_a_connection_cannot_act_for_another_player(tmp_path: Path, secrets: None) -> None:
    async with (
        serving(GAME, tmp_path, _settings(), responder=respond) as stack,
        stack.client(headers=_bearer(_token("p1"))) as alice,
        Client(stack.ws_url + f"?token={_token('p2')}") as mallory,
    ):
        await mallory.send({"t": "hello", "playerId": "p1"})
        hello = await mallory.recv()
        assert hello["code"] == "forbidden" and "p2" in hello["message"]
        steal = {"t": "encounter.open", "id": "e1", "npcId": "n-baker", "playerId": "p1"}
        await mallory.send(steal)
        refused = await mallory.recv()
        assert (refused["code"], refused["id"]) == ("forbidden", "e1")
        # A token for p1 sent in hello by p2's connection does not rebind it either.
        await mallory.send({"t": "hello", "playerId": "p1", "token": _token("p1")})
        assert (await mallory.recv())["code"] == "forbidden"
        # Alice buys; her HUD reaches her connection only.
        await alice.send({"t": "hello", "playerId": "p1"})
        assert (await alice.recv())["hud"]["coins"] == 20
        await alice.open("a1", "n-baker", "p1")
        frames = await alice.say("a1", "buy 2")
        assert [f["playerId"] for f in frames if f["t"] == "hud"] == ["p1"]
        await mallory.send({"t": "hello", "playerId": "p2"})
        welcome = await mallory.recv()
        assert welcome["t"] == "welcome"  # nothing of p1's arrived in between
        assert stack.world.player_view("p1")["coins"] == 14


async def test_without_a_token_only_hello_is_accepted(tmp_path: Path, secrets: None) -> None:
    async with (
        serving(GAME, tmp_path, _settings(), responder=respond) as stack,
        stack.client() as anonymous,
    ):
        await anonymous.send({"t": "hello", "playerId": "p1"})
        missing = await anonymous.recv()
        assert missing["code"] == "unauthorized" and "token" in missing["message"]
        await anonymous.send(
            {"t": "encounter.open", "id": "e1", "npcId": "n-baker", "playerId": "p1"}
        )
        assert (await anonymous.recv())["code"] == "unauthorized"
        wrong_player = _token("p2")
        await anonymous.send({"t": "hello", "playerId": "p1", "token": wrong_player})
        assert (await anonymous.recv())["code"] == "forbidden"
        await anonymous.send({"t": "hello", "playerId": "p1", "token": _token("p1")})
        assert (await anonymous.recv())["t"] == "welcome"
        await anonymous.open("e1", "n-baker", "p1")
        await anonymous.send(
            {"t": "encounter.open", "id": "e2", "npcId": "n-baker", "playerId": "p2"}
        )
        assert (await anonymous.recv())["code"] == "forbidden"


@pytest.mark.parametrize(
    ("token", "words"),
    [
        (mint_player_token("another-secret-of-at-least-32-chars!", "p1"), "signature"),
        (mint_player_token(SECRET, "p1", now=time.time() - 7200), "expired"),
        (mint_player_token(SECRET, "p1", audience="another-game"), "another server"),
        ("not.a.token", "not valid"),
    ],
)
async def test_forged_expired_and_foreign_tokens_are_refused(
    tmp_path: Path, secrets: None, token: str, words: str
) -> None:
    async with serving(GAME, tmp_path, _settings()) as stack:
        async with stack.client(headers=_bearer(token)) as client:
            refusal = await _refused(client)
            assert refusal["code"] == "unauthorized" and words in str(refusal["message"])
        async with stack.client() as late:
            await late.send({"t": "hello", "playerId": "p1", "token": token})
            refused = await late.recv()
            assert refused["code"] == "unauthorized" and words in refused["message"]


async def test_a_non_loopback_host_needs_player_tokens(
    tmp_path: Path, secrets: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = Context("unused")
    token_only = ServerSettings(host="0.0.0.0", port=0, auth_token_env=SERVER_ENV)
    with pytest.raises(ExposureError, match="player tokens"):
        await start_server(ctx, GAME, token_only)
    monkeypatch.setenv("STAR_HARNESS_TEST_SHORT", "fifteen-chars!!")
    short = ServerSettings(port=0, auth_token_env="STAR_HARNESS_TEST_SHORT")
    with pytest.raises(ExposureError, match="at least 16"):
        await start_server(ctx, GAME, short)
    monkeypatch.setenv("STAR_HARNESS_TEST_WEAK", "x" * 31)
    weak = _settings(identity=IdentitySettings(secret_env="STAR_HARNESS_TEST_WEAK"))
    with pytest.raises(ExposureError, match="at least 32"):
        await start_server(ctx, GAME, weak)


async def test_an_exposed_server_serves_token_holders(tmp_path: Path, secrets: None) -> None:
    settings = _settings(host="0.0.0.0", public_names=["game.example"])
    async with serving(GAME, tmp_path, settings) as stack:
        url = f"ws://127.0.0.1:{stack.running.port}/gh"
        async with Client(url, headers=_bearer(_token("p1"))) as player:
            await player.send({"t": "hello", "playerId": "p1"})
            assert (await player.recv())["t"] == "welcome"


# -- Host and Origin --------------------------------------------------------------------------


async def test_a_rebound_host_is_refused_on_every_route(tmp_path: Path, secrets: None) -> None:
    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text("<p>game</p>", encoding="utf-8")
    (web / "app.js").write_text("1;", encoding="utf-8")
    settings = ServerSettings(port=0, web_root=web, public_names=["game.example"])
    async with serving(GAME, tmp_path, settings) as stack:
        port = stack.running.port
        rebound = f"rebind.attacker.example:{port}"
        for path in ("/healthz", "/metrics", "/", "/app.js", "/index.html", "/gh"):
            assert await asyncio.to_thread(raw_status, port, path, rebound) == 403, path
            for good in (f"127.0.0.1:{port}", f"localhost:{port}", f"game.example:{port}"):
                status = await asyncio.to_thread(raw_status, port, path, good)
                # A plain GET of the frame path is not a WebSocket: the web root answers 404.
                assert status == (404 if path == "/gh" else 200), (path, good)
        assert await asyncio.to_thread(raw_status, port, "/gh", rebound, True) == 403
        assert await asyncio.to_thread(raw_status, port, "/gh", f"localhost:{port}", True) == 101
        async with httpx.AsyncClient(base_url=stack.running.url, trust_env=False) as http:
            assert (await http.get("/healthz")).status_code == 200


async def test_two_host_headers_are_refused_in_either_order_and_the_server_lives_on(
    tmp_path: Path,
) -> None:
    async with serving(GAME, tmp_path) as stack:
        port = stack.running.port
        good, rebound = f"127.0.0.1:{port}", f"rebind.attacker.example:{port}"
        for hosts in ((good, rebound), (rebound, good), (good, good)):
            for upgrade in (False, True):
                status = await asyncio.to_thread(raw_status, port, "/gh", hosts, upgrade)
                # A handshake refused before accept answers 403 (see HostGuard._refuse).
                assert status == (403 if upgrade else 400), (hosts, upgrade)
        assert await asyncio.to_thread(raw_status, port, "/gh", good, True) == 101
        async with stack.client() as client:
            await client.send({"t": "hello", "playerId": "p1"})
            assert (await client.recv())["t"] == "welcome"


async def test_a_foreign_origin_under_an_allowed_host_is_refused(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path) as stack:
        port = stack.running.port
        async with stack.client(origin=f"http://rebind.attacker.example:{port}") as page:
            assert (await _refused(page))["code"] == "unauthorized"
        async with stack.client(origin=f"http://127.0.0.1:{port}") as own:
            await own.send({"t": "hello", "playerId": "p1"})
            assert (await own.recv())["t"] == "welcome"


# -- the world clock --------------------------------------------------------------------------


async def test_players_may_not_tick_a_shared_world(tmp_path: Path, secrets: None) -> None:
    settings = _settings(auth_token_env=SERVER_ENV)
    async with serving(GAME, tmp_path, settings) as stack:
        day = _day(stack)
        async with stack.client(headers=_bearer(_token("p1"))) as player:
            await player.send({"t": "world.tick", "days": 365})
            refused = await player.recv()
            assert refused["code"] == "forbidden" and "clock" in refused["message"]
        async with stack.client(headers=_bearer(SERVER_TOKEN)) as game_server:
            await game_server.send({"t": "world.tick", "days": 2})
            assert (await game_server.recv())["t"] == "world.event"
        scoped = _token("clock", scopes=["world.tick"])
        async with stack.client(headers=_bearer(scoped)) as ticker:
            await ticker.send({"t": "world.tick", "days": 1})
            assert (await ticker.recv())["t"] == "world.event"
        assert _day(stack) == day + 3


async def test_a_local_server_may_refuse_player_ticks(tmp_path: Path) -> None:
    settings = ServerSettings(port=0, ticks=TickSettings(players=False))
    async with serving(GAME, tmp_path, settings) as stack, stack.client() as client:
        await client.send({"t": "world.tick", "days": 1})
        assert (await client.recv())["code"] == "forbidden"


async def test_ticks_are_bounded_per_call_and_per_minute(tmp_path: Path) -> None:
    settings = ServerSettings(
        port=0,
        limits=LimitsSettings(max_tick_days=30),
        ticks=TickSettings(max_days_per_minute=50),
    )
    async with serving(GAME, tmp_path, settings) as stack, stack.client() as client:
        day = _day(stack)
        await client.send({"t": "world.tick", "days": 31})
        assert (await client.recv())["code"] == "limit"
        await client.send({"t": "world.tick", "days": 30})
        assert (await client.recv())["t"] == "world.event"
        await client.send({"t": "world.tick", "days": 30})
        over = await client.recv()
        while over["t"] in ("world.event", "hud"):
            over = await client.recv()
        assert over["code"] == "limit" and "20 are left" in over["message"]
        assert _day(stack) == day + 30


async def test_the_server_can_drive_the_clock_on_a_schedule(tmp_path: Path) -> None:
    settings = ServerSettings(port=0, ticks=TickSettings(players=False, every_s=0.05, days=1))
    async with serving(GAME, tmp_path, settings) as stack:
        day = _day(stack)
        await eventually(lambda: _day(stack) >= day + 2)


def test_the_cli_mints_a_token_the_server_accepts(tmp_path: Path) -> None:
    env = {**os.environ, SECRET_ENV: SECRET}
    result = subprocess.run(
        [sys.executable, "-m", "starharness.cli", "token", "mint", "p7",
         "--secret-env", SECRET_ENV, "--ttl", "60", "--scope", "world.tick"],
        capture_output=True, text=True, env=env, check=True, timeout=60,
    )  # fmt: skip
    claims = PlayerTokens(SECRET).verify(result.stdout.strip())
    assert claims.player_id == "p7" and claims.scopes == {"world.tick"}
    assert time.time() < claims.expires_at <= time.time() + 61
    missing = subprocess.run(
        [sys.executable, "-m", "starharness.cli", "token", "mint", "p7", "--secret-env", "NOPE_X"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert missing.returncode != 0 and "NOPE_X is not set" in missing.stderr
