"""Port fallback: only 'address in use' moves on, inside the range."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator

import pytest
from godot_support import dead_pid, free_base_port
from hypothesis import given
from hypothesis import strategies as st

from starharness.godot import BridgeSettings, GodotBridge, GodotError, GodotErrorCode
from starharness.godot.bridge.endpoint import build_endpoint, read_endpoint, write_endpoint
from starharness.godot.bridge.ports import candidate_ports, listen_first_free


@pytest.fixture
def occupy() -> Iterator[list[socket.socket]]:
    held: list[socket.socket] = []
    yield held
    for sock in held:
        sock.close()


def _listen(port: int, held: list[socket.socket]) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", port))
    sock.listen()
    held.append(sock)


@given(base=st.integers(1024, 60_000), span=st.integers(1, 20), data=st.data())
def test_candidates_inside_the_range_wrap_around(base: int, span: int, data: st.DataObject) -> None:
    preferred = data.draw(st.integers(base, base + span - 1))
    ports = candidate_ports(preferred, base, span)
    assert ports[0] == preferred
    assert sorted(ports) == list(range(base, base + span))


def test_candidates_outside_the_range_count_up() -> None:
    assert candidate_ports(9000, 8765, 3) == [9000, 9001, 9002]
    assert candidate_ports(8765, 8765, 10)[-1] == 8774
    assert candidate_ports(8770, 8765, 10) == [8770, 8771, 8772, 8773, 8774, *range(8765, 8770)]


async def test_a_taken_first_port_moves_to_the_next(
    settings: BridgeSettings, occupy: list[socket.socket]
) -> None:
    _listen(settings.base_port, occupy)

    async with GodotBridge(settings) as bridge:
        port = bridge.port

    assert port == settings.base_port + 1
    endpoint = read_endpoint(settings.endpoint_file).endpoint
    assert endpoint is not None and endpoint.port == port


async def test_a_taken_reused_port_wraps_inside_the_range(
    settings: BridgeSettings, occupy: list[socket.socket]
) -> None:
    last = settings.base_port + settings.port_span - 1
    write_endpoint(
        settings.endpoint_file, build_endpoint("127.0.0.1", last, "e" * 32, await dead_pid())
    )
    _listen(last, occupy)

    async with GodotBridge(settings) as bridge:
        port = bridge.port

    assert port == settings.base_port


async def test_every_port_taken_is_reported_and_nothing_is_written(
    settings: BridgeSettings, occupy: list[socket.socket]
) -> None:
    small = BridgeSettings(home=settings.home, base_port=free_base_port(2), port_span=2)
    for port in (small.base_port, small.base_port + 1):
        _listen(port, occupy)

    with pytest.raises(GodotError) as raised:
        await GodotBridge(small).start()

    assert raised.value.code is GodotErrorCode.PORTS_EXHAUSTED
    assert f"{small.base_port}-{small.base_port + 1}" in raised.value.message
    assert not small.endpoint_file.exists()


async def test_any_other_bind_error_is_reported_without_trying_more_ports() -> None:
    # 192.0.2.1 (TEST-NET-1) is not an address of this machine: EADDRNOTAVAIL, not EADDRINUSE.
    with pytest.raises(GodotError) as raised:
        await listen_first_free(asyncio.Protocol, "192.0.2.1", [23_001, 23_002])

    assert raised.value.code is GodotErrorCode.BIND_FAILED
    assert "127.0.0.1:23001" in raised.value.message
