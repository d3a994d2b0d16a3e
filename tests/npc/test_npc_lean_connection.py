"""What an open WebSocket lets go after its handshake, over a real connection."""

from __future__ import annotations

from pathlib import Path

from npc_support import eventually, serving
from tinygame import GAME
from tinygame.brain import respond


async def test_an_open_connection_keeps_only_host_and_origin_and_still_tells_its_peer(
    tmp_path: Path,
) -> None:
    async with serving(GAME, tmp_path, responder=respond) as stack:
        port = stack.running.port
        origin = f"http://127.0.0.1:{port}"
        extra = {"User-Agent": "lean-test", "Cookie": "a=b"}
        async with stack.client(origin=origin, headers=extra) as page:
            frames = await page.open("e1", "n-baker", "p1")
            assert frames[-1]["t"] == "encounter.idle"
            await eventually(lambda: len(stack.running.server.connections) == 1)
            (connection,) = stack.running.server.connections
            websocket = connection.websocket
            assert websocket.headers.get("host") == f"127.0.0.1:{port}"
            assert websocket.headers.get("origin") == origin
            assert websocket.headers.get("user-agent") is None  # let go once admitted
            assert websocket.client is not None and websocket.client.host == "127.0.0.1"
            # The connection still works after all that was dropped.
            turn = await page.say("e1", "Any bread?")
            assert turn[-1]["t"] == "encounter.idle"
            assert any(f["t"] == "say.delta" for f in turn)


async def test_frames_right_after_the_handshake_are_each_read(tmp_path: Path) -> None:
    """Two connections, frames back to back right after each handshake: no byte is lost."""
    async with (
        serving(GAME, tmp_path, responder=respond) as stack,
        stack.client() as first,
        stack.client() as second,
    ):
        await first.send({"t": "hello", "playerId": "p1"})
        await second.send({"t": "hello", "playerId": "p1"})
        assert (await first.recv())["t"] == "welcome"
        assert (await second.recv())["t"] == "welcome"
        bad = [first.send({"t": "nope", "n": n}) for n in range(5)]
        for sending in bad:
            await sending
        codes = [(await first.recv())["code"] for _ in range(5)]
        assert codes == ["bad_frame"] * 5
