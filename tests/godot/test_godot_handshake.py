"""The editor_ready handshake: good, missing and bad tokens, strangers and silence."""

from __future__ import annotations

import asyncio
from pathlib import Path

from godot_support import ConnectEditor, MakeBridge, eventually

from starharness.godot import BridgeEvent, GodotBridge, GodotError, GodotErrorCode, HandshakeFailure
from starharness.godot.testing import FakeAddon


async def _fake(bridge: GodotBridge, project: Path, *, token: str | None) -> FakeAddon:
    endpoint = bridge.endpoint
    assert endpoint is not None
    return FakeAddon(endpoint.host, endpoint.port, token=token, project_path=str(project))


async def test_the_right_token_pairs_the_editor(bridge: GodotBridge, project: Path) -> None:
    assert bridge.endpoint is not None
    fake = await _fake(bridge, project, token=bridge.endpoint.token.upper())
    try:
        await fake.connect()
        assert await bridge.wait_for_editors(1, timeout_s=5)
        status = bridge.status()
    finally:
        await fake.close()

    client = status.clients[0]
    assert client.authenticated and client.active
    assert client.project_path == str(project)
    assert client.godot_version == fake.godot_version
    assert status.last_addon_version == fake.addon_version
    assert status.handshake_failures == 0


async def test_a_missing_token_closes_the_socket_and_is_counted(
    bridge: GodotBridge, project: Path
) -> None:
    fake = await _fake(bridge, project, token=None)
    try:
        await fake.connect()
        closed = await fake.wait_closed_by_peer()
    finally:
        await fake.close()
    status = bridge.status()

    assert closed
    assert status.clients == []
    assert status.handshake_failures == 1
    assert status.last_handshake_failure == HandshakeFailure.MISSING_TOKEN
    assert status.last_handshake_failure_advice is not None
    assert "reinstall" in status.last_handshake_failure_advice


async def test_a_bad_token_closes_the_socket_and_the_no_editor_error_says_why(
    bridge: GodotBridge, project: Path
) -> None:
    fakes = [await _fake(bridge, project, token="0" * 32) for _ in range(2)]
    try:
        for fake in fakes:
            await fake.connect()
            assert await fake.wait_closed_by_peer()
    finally:
        for fake in fakes:
            await fake.close()

    try:
        await bridge.call("ping")
    except GodotError as error:
        failure = error
    else:
        raise AssertionError("a call without a paired editor must fail")
    status = bridge.status()

    assert status.handshake_failures == 2
    assert status.last_handshake_failure == HandshakeFailure.BAD_TOKEN
    assert [record.code for record in status.last_errors[:2]] == ["bad_token", "bad_token"]
    assert failure.code is GodotErrorCode.NO_EDITOR
    assert "refused 2 connection attempt(s)" in failure.message
    assert "token does not match" in failure.message


async def test_a_first_message_that_is_not_editor_ready_is_refused(
    bridge: GodotBridge, project: Path
) -> None:
    assert bridge.endpoint is not None
    fake = await _fake(bridge, project, token=bridge.endpoint.token)
    try:
        await fake.connect(handshake=False)
        await fake.send({"id": "1", "ok": True, "result": None})
        closed = await fake.wait_closed_by_peer()
    finally:
        await fake.close()

    assert closed
    assert bridge.status().last_handshake_failure == HandshakeFailure.NOT_EDITOR_READY


async def test_silence_after_connecting_times_out_the_handshake(
    make_bridge: MakeBridge, project: Path
) -> None:
    bridge = await make_bridge(time_scale=0.001, handshake_timeout_ms=10_000)
    fake = await _fake(bridge, project, token=None)
    try:
        await fake.connect(handshake=False)
        closed = await fake.wait_closed_by_peer()
    finally:
        await fake.close()

    assert closed
    assert bridge.status().last_handshake_failure == HandshakeFailure.HANDSHAKE_TIMEOUT


async def test_a_probe_that_connects_and_leaves_is_not_a_failure(
    bridge: GodotBridge, connect_editor: ConnectEditor, project: Path
) -> None:
    assert bridge.port is not None
    _, writer = await asyncio.open_connection("127.0.0.1", bridge.port)
    writer.close()
    await writer.wait_closed()
    await connect_editor(bridge, project)
    # The probe was accepted first (it is c1); once it is gone its handler has finished.
    await eventually(lambda: [c.id for c in bridge.status().clients] == ["c2"])

    assert bridge.status().handshake_failures == 0


async def test_events_report_connects_refusals_and_disconnects(
    make_bridge: MakeBridge, project: Path
) -> None:
    seen: list[BridgeEvent] = []
    bridge = await make_bridge()
    bridge_with_sink = GodotBridge(bridge.settings, event_sink=seen.append)
    await bridge.stop()
    async with bridge_with_sink:
        assert bridge_with_sink.endpoint is not None
        good = await _fake(bridge_with_sink, project, token=bridge_with_sink.endpoint.token)
        bad = await _fake(bridge_with_sink, project, token="f" * 32)
        try:
            await bad.connect()
            assert await bad.wait_closed_by_peer()
            await good.connect()
            assert await bridge_with_sink.wait_for_editors(1, timeout_s=5)
        finally:
            await good.close()
            await bad.close()
        await eventually(lambda: any(event.kind == "disconnected" for event in seen))

    kinds = [event.kind for event in seen]
    assert kinds == ["handshake_failed", "connected", "disconnected"]
    assert seen[0].detail == {"reason": "bad_token"}
    assert seen[1].detail == {"projectPath": str(project)}
