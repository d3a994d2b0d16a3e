"""The Python frame client: connecting, what each failure says, sending and receiving frames."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from frame_fakes import FakeHarness, running_fake, up_types
from websockets.asyncio.server import ServerConnection, serve
from websockets.http11 import Request, Response

from starharness.npc.client import ClientError, ConnectionLostError, ServerUnreachableError, connect
from starharness.npc.frames import (
    EncounterIdle,
    EncounterOpened,
    ErrorCode,
    ErrorFrame,
    FrameError,
    Options,
    SayDelta,
    SayEnd,
    Welcome,
    WorldEvent,
)


async def test_helpers_send_the_documented_frames_and_receive_parses_answers() -> None:
    async with running_fake() as harness, connect(harness.url) as connection:
        await connection.hello("p1")
        welcome = await connection.receive()
        await connection.open_encounter("e1", "n1", "p1")
        opening = [await connection.receive() for _ in range(7)]
        await connection.tick(2)
        event = await connection.receive()
        await connection.close_encounter("e1")
        await connection.send_text("not json")
        refusal = await connection.receive()

    assert isinstance(welcome, Welcome)
    assert [npc.name for npc in welcome.npcs] == ["Ada", "Bo"]
    assert [type(frame) for frame in opening] == [
        EncounterOpened,
        SayDelta,
        SayDelta,
        SayDelta,
        SayEnd,
        Options,
        EncounterIdle,
    ]
    assert isinstance(event, WorldEvent)
    assert event.headline == "2 days pass"
    assert isinstance(refusal, ErrorFrame)
    assert refusal.code is ErrorCode.BAD_FRAME
    assert harness.received[:4] == [
        {"t": "hello", "playerId": "p1"},
        {"t": "encounter.open", "id": "e1", "npcId": "n1", "playerId": "p1"},
        {"t": "world.tick", "days": 2},
        {"t": "encounter.close", "id": "e1"},
    ]


async def test_say_and_choose_send_exactly_one_of_text_and_option() -> None:
    async with running_fake() as harness, connect(harness.url) as connection:
        await connection.say("e1", "hi")
        await connection.choose("e1", "buy")
        await connection.hello("p1")
        await connection.receive()

    assert harness.received[:2] == [
        {"t": "encounter.say", "id": "e1", "text": "hi"},
        {"t": "encounter.say", "id": "e1", "optionId": "buy"},
    ]


async def test_a_frame_the_client_cannot_read_raises_frame_error_and_the_next_one_arrives() -> None:
    fake = FakeHarness(raw_after_hello='{"t":"say.delta","id":"e1"}')
    async with running_fake(fake) as harness, connect(harness.url) as connection:
        await connection.hello("p1")
        assert isinstance(await connection.receive(), Welcome)
        with pytest.raises(FrameError, match=r"say\.delta: field 'text' is required"):
            await connection.receive()
        await connection.tick(1)
        assert isinstance(await connection.receive(), WorldEvent)
    assert up_types(harness) == ["hello", "world.tick"]


async def test_a_closed_connection_raises_connection_lost_with_the_reason() -> None:
    async with (
        running_fake(FakeHarness(drop_after_frames=1)) as harness,
        connect(harness.url) as connection,
    ):
        await connection.tick(1)
        await connection.receive()
        with pytest.raises(ConnectionLostError, match=r"code 1011: fake harness stopping"):
            await connection.receive()


@asynccontextmanager
async def _refusing_server(status: int) -> AsyncIterator[str]:
    def refuse(connection: ServerConnection, request: Request) -> Response:
        return connection.respond(status, "no\n")

    async def never(connection: ServerConnection) -> None:
        raise AssertionError("the handshake should have been refused")

    async with serve(never, "127.0.0.1", 0, process_request=refuse) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}/gh"


async def test_a_refused_handshake_names_the_http_status() -> None:
    async with _refusing_server(403) as url:
        with pytest.raises(ServerUnreachableError, match=r"refused the connection: HTTP 403$"):
            async with connect(url):
                pass


async def test_a_url_that_is_not_a_websocket_url_is_a_client_error() -> None:
    with pytest.raises(ClientError, match=r"'http://127\.0\.0\.1:1/gh' is not a WebSocket URL"):
        async with connect("http://127.0.0.1:1/gh"):
            pass
