"""Strangers on the bridge port are bounded: how many may wait, and what each may send."""

from __future__ import annotations

import asyncio
from pathlib import Path

from godot_support import MakeBridge, eventually

from starharness.godot import GodotBridge, HandshakeFailure
from starharness.godot.testing import FakeAddon


async def _closed_by_peer(reader: asyncio.StreamReader) -> bool:
    try:
        async with asyncio.timeout(10):
            while await reader.read(4096):
                pass
    except (ConnectionError, TimeoutError):
        return False
    return True


async def test_bytes_before_the_handshake_are_capped(make_bridge: MakeBridge) -> None:
    bridge: GodotBridge = await make_bridge(max_handshake_bytes=4096)
    assert bridge.endpoint is not None
    reader, writer = await asyncio.open_connection(bridge.endpoint.host, bridge.endpoint.port)
    try:
        # A line that never ends: without a cap it would be buffered up to the line limit.
        for _ in range(8):
            writer.write(b"x" * 1024)
            await writer.drain()
        assert await _closed_by_peer(reader)
    finally:
        writer.close()
    status = bridge.status()
    assert status.last_handshake_failure == HandshakeFailure.HANDSHAKE_TOO_LARGE
    assert status.clients == []


async def test_unauthenticated_connections_are_capped(
    make_bridge: MakeBridge, project: Path
) -> None:
    bridge = await make_bridge(max_unauthenticated=3)
    endpoint = bridge.endpoint
    assert endpoint is not None
    silent = [await asyncio.open_connection(endpoint.host, endpoint.port) for _ in range(3)]
    try:
        await eventually(lambda: len(bridge.status().clients) == 3)
        reader, writer = await asyncio.open_connection(endpoint.host, endpoint.port)
        assert await _closed_by_peer(reader)
        writer.close()
        failure = bridge.status().last_handshake_failure
        assert failure == HandshakeFailure.TOO_MANY_UNAUTHENTICATED
    finally:
        for _, silent_writer in silent:
            silent_writer.close()
    # Once the strangers leave, the real editor gets in.
    await eventually(lambda: bridge.status().clients == [])
    fake = FakeAddon(endpoint.host, endpoint.port, token=endpoint.token, project_path=str(project))
    try:
        await fake.connect()
        assert await bridge.wait_for_editors(1, timeout_s=5)
    finally:
        await fake.close()


async def test_the_real_editor_pairs_past_squatters_and_the_oldest_leaves(
    make_bridge: MakeBridge, project: Path
) -> None:
    bridge = await make_bridge(max_unauthenticated=3)
    endpoint = bridge.endpoint
    assert endpoint is not None
    squatters = [await asyncio.open_connection(endpoint.host, endpoint.port) for _ in range(3)]
    fake = FakeAddon(endpoint.host, endpoint.port, token=endpoint.token, project_path=str(project))
    try:
        await eventually(lambda: len(bridge.status().clients) == 3)
        # The editor arrives with every waiting place taken, and hands over the token at once.
        await fake.connect()
        assert await bridge.wait_for_editors(1, timeout_s=5)
        # The oldest stranger made room; the others still wait (until their own timeout).
        assert await _closed_by_peer(squatters[0][0])
        status = bridge.status()
        assert status.last_handshake_failure == HandshakeFailure.TOO_MANY_UNAUTHENTICATED
        assert sum(not client.authenticated for client in status.clients) == 2
        assert [c.authenticated for c in status.clients].count(True) == 1
    finally:
        for _, writer in squatters:
            writer.close()
        await fake.close()
