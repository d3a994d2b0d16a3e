"""An open WebSocket over real connections: reading goes on frame after frame, proxies name the
client, and compression is offered only when the settings say so."""

from __future__ import annotations

from pathlib import Path

from npc_support import serving
from tinygame import GAME
from tinygame.brain import respond

from starharness.npc import ServerSettings


async def test_frames_sent_back_to_back_are_each_read_and_reading_resumes(
    tmp_path: Path,
) -> None:
    async with serving(GAME, tmp_path, responder=respond) as stack, stack.client() as page:
        await page.send({"t": "hello", "playerId": "p1"})
        assert (await page.recv())["t"] == "welcome"
        sending = [page.send({"t": "nope", "n": n}) for n in range(30)]
        for send in sending:
            await send
        codes = [(await page.recv())["code"] for _ in range(30)]
        assert codes == ["bad_frame"] * 30
        welcome = await page.open("e1", "n-baker", "p1")
        assert welcome[-1]["t"] == "encounter.idle"


async def test_a_trusted_proxy_names_the_client_and_scheme(tmp_path: Path) -> None:
    headers = {"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https"}
    async with (
        serving(GAME, tmp_path, responder=respond) as stack,
        stack.client(headers=headers) as page,
    ):
        await page.send({"t": "hello", "playerId": "p1"})
        assert (await page.recv())["t"] == "welcome"
        (connection,) = stack.running.server.connections
        websocket = connection.websocket
        assert websocket.client is not None and websocket.client.host == "203.0.113.7"
        assert websocket.scope["scheme"] == "wss"


async def test_frames_are_compressed_only_when_the_settings_offer_it(tmp_path: Path) -> None:
    for compress, folder in ((False, "plain"), (True, "deflate")):
        (tmp_path / folder).mkdir()
        settings = ServerSettings(port=0, compress_frames=compress)
        async with (
            serving(GAME, tmp_path / folder, settings, responder=respond) as stack,
            stack.client(compression="deflate") as page,  # as browsers offer it
        ):
            response = page.ws.response
            assert response is not None
            agreed = response.headers.get("Sec-WebSocket-Extensions") or ""
            assert ("permessage-deflate" in agreed) is compress, agreed
            await page.send({"t": "hello", "playerId": "p1"})
            assert (await page.recv())["t"] == "welcome"
