"""A player token counts only until it expires, for as long as its connection lives (issue 38).

Through the real server and real WebSockets: at expiry the connection gets `unauthorized`
naming it and a close with 1008, its encounters close as on any disconnect, and a frame that
arrives after expiry does nothing even where the timer has not run yet.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from npc_support import WAIT_S, Client, eventually, serving
from tinygame import GAME
from tinygame.brain import respond

from starharness.npc import ServerSettings
from starharness.npc.client import ConnectionLostError
from starharness.npc.identity import mint_player_token
from starharness.npc.server.connection import Connection
from starharness.npc.server.settings import IdentitySettings

SECRET_ENV = "STAR_HARNESS_TEST_PLAYER_SECRET"
SECRET = "a-player-token-secret-of-forty-characters"


@pytest.fixture(autouse=True)
def secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_ENV, SECRET)


def _settings() -> ServerSettings:
    # No leeway: a two-second token expires within two seconds.
    return ServerSettings(port=0, identity=IdentitySettings(secret_env=SECRET_ENV, leeway_s=0))


def _bearer(player: str, ttl_s: float, scopes: tuple[str, ...] = ()) -> dict[str, str]:
    token = mint_player_token(SECRET, player, ttl_s=ttl_s, scopes=scopes)
    return {"Authorization": f"Bearer {token}"}


def _day(stack: object) -> int:
    return int(stack.world.player_view("p1")["day"])  # type: ignore[attr-defined]


async def _closed_for_expiry(client: Client) -> None:
    """The next frame is the expiry's `unauthorized`; then the server closes with 1008."""
    frame = await client.recv(WAIT_S)
    assert frame["t"] == "error" and frame["code"] == "unauthorized", frame
    assert "expired at" in frame["message"] and "fresh" in frame["message"], frame
    with pytest.raises(ConnectionLostError) as closed:
        await client.recv(WAIT_S)
    assert closed.value.code == 1008


async def test_a_scoped_token_stops_ticking_and_its_connection_closes_at_expiry(
    tmp_path: Path,
) -> None:
    async with serving(GAME, tmp_path, _settings()) as stack:
        day = _day(stack)
        async with Client(stack.ws_url, headers=_bearer("clock", 2, ("world.tick",))) as ticker:
            await ticker.send({"t": "world.tick", "days": 1})
            assert (await ticker.recv())["t"] == "world.event"
            await _closed_for_expiry(ticker)
        assert _day(stack) == day + 1
        await eventually(lambda: not stack.running.server.connections)


async def test_a_tick_after_expiry_is_refused_even_before_the_timer_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A timer that never fires (a busy loop runs it late): the frame itself checks the expiry.
    monkeypatch.setattr(Connection, "_watch_expiry", lambda self: None)  # pyright: ignore[reportUnknownLambdaType]
    async with serving(GAME, tmp_path, _settings()) as stack:
        day = _day(stack)
        async with Client(stack.ws_url, headers=_bearer("clock", 1, ("world.tick",))) as ticker:
            server = stack.running.server
            await eventually(lambda: len(server.connections) == 1)
            (connection,) = server.connections
            await eventually(lambda: connection.access.expired(time.time()))
            await ticker.send({"t": "world.tick", "days": 5})
            await _closed_for_expiry(ticker)
        assert _day(stack) == day


async def test_an_encounter_opened_before_expiry_closes_with_the_connection(
    tmp_path: Path,
) -> None:
    async with serving(GAME, tmp_path, _settings(), responder=respond) as stack:
        async with Client(stack.ws_url, headers=_bearer("p1", 2)) as player:
            await player.send({"t": "hello", "playerId": "p1"})
            assert (await player.recv())["t"] == "welcome"
            await player.open("e1", "n-baker", "p1")
            assert len(stack.running.server.encounters) == 1
            frames = await player.until(lambda f: f["t"] == "error", WAIT_S)
            assert frames[-1]["code"] == "unauthorized" and "expired" in frames[-1]["message"]
            with pytest.raises(ConnectionLostError):
                await player.until(lambda f: False, WAIT_S)
        await eventually(lambda: not stack.running.server.encounters)
        await eventually(lambda: not stack.running.server.connections)


async def test_a_fresh_token_in_hello_keeps_the_connection(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path, _settings()) as stack:
        fresh = mint_player_token(SECRET, "p1", ttl_s=3600)
        async with Client(stack.ws_url, headers=_bearer("p1", 1)) as player:
            await player.send({"t": "hello", "playerId": "p1", "token": fresh})
            assert (await player.recv())["t"] == "welcome"
            server = stack.running.server
            (connection,) = server.connections
            # Past the first token's expiry (and its timer), the connection still answers.
            await asyncio.sleep(2.5)
            await player.send({"t": "hello", "playerId": "p1"})
            assert (await player.recv())["t"] == "welcome"
            assert connection in server.connections


async def test_a_connection_that_ends_first_cancels_its_expiry_timer(tmp_path: Path) -> None:
    async with serving(GAME, tmp_path, _settings()) as stack:
        server = stack.running.server
        async with Client(stack.ws_url, headers=_bearer("p1", 3600)) as player:
            await player.send({"t": "hello", "playerId": "p1"})
            assert (await player.recv())["t"] == "welcome"
            (connection,) = server.connections
            timer = connection._expiry  # pyright: ignore[reportPrivateUsage]
            assert timer is not None and not timer.cancelled()
        await eventually(lambda: not server.connections)
        assert timer.cancelled()
        assert connection._expiry is None  # pyright: ignore[reportPrivateUsage]
