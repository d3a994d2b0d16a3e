"""The endpoint file: atomic owner-only writes, reuse, refusal next to a live bridge."""

from __future__ import annotations

import json
import os
import stat
import threading
from datetime import datetime
from pathlib import Path

import pytest
from godot_support import MakeBridge, dead_pid

from starharness.godot import BridgeSettings, GodotBridge, GodotError, GodotErrorCode
from starharness.godot.bridge.endpoint import (
    EndpointFile,
    build_endpoint,
    default_home,
    read_endpoint,
    write_endpoint,
)


def _read_json(path: Path) -> dict[str, object]:
    data = json.loads(path.read_text())
    assert isinstance(data, dict)
    return data


async def test_the_endpoint_file_is_published_owner_only(bridge: GodotBridge) -> None:
    path = bridge.settings.endpoint_file
    data = _read_json(path)

    assert set(data) == {"host", "port", "token", "version", "updatedAt", "pid"}
    assert data["host"] == "127.0.0.1"
    assert data["port"] == bridge.port == bridge.settings.base_port
    assert isinstance(data["token"], str) and len(data["token"]) == 32
    int(data["token"], 16)
    assert data["version"] == 1
    assert data["pid"] == os.getpid()
    assert isinstance(data["updatedAt"], str)
    datetime.fromisoformat(data["updatedAt"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == ["endpoint.json"]


def test_writes_replace_the_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "godot" / "endpoint.json"
    write_endpoint(path, build_endpoint("127.0.0.1", 8765, "a" * 32, 1))
    torn: list[str] = []
    stop = threading.Event()

    def keep_reading() -> None:
        while not stop.is_set():
            text = path.read_text()
            try:
                json.loads(text)
            except ValueError:
                torn.append(text)

    reader = threading.Thread(target=keep_reading)
    reader.start()
    try:
        for port in range(1000, 1300):
            write_endpoint(path, build_endpoint("127.0.0.1", port, "b" * 32, 2))
    finally:
        stop.set()
        reader.join()

    with path.open() as old:
        write_endpoint(path, build_endpoint("127.0.0.1", 4242, "c" * 32, 3))
        old_text = old.read()
        replaced = os.fstat(old.fileno()).st_ino != path.stat().st_ino

    assert torn == []
    assert replaced, "the file must be replaced by a rename, not rewritten in place"
    assert '"port": 1299' in old_text
    assert read_endpoint(path).endpoint == EndpointFile.model_validate_json(path.read_text())
    assert [p.name for p in path.parent.iterdir()] == ["endpoint.json"]


async def test_token_and_port_are_reused_and_the_file_is_kept_on_stop(
    settings: BridgeSettings,
) -> None:
    preferred = settings.base_port + 3
    write_endpoint(settings.endpoint_file, build_endpoint("127.0.0.1", preferred, "C" * 32, 1))

    async with GodotBridge(settings) as first:
        first_endpoint = first.endpoint
    kept = read_endpoint(settings.endpoint_file).endpoint
    async with GodotBridge(settings) as second:
        second_endpoint = second.endpoint

    assert first_endpoint is not None and second_endpoint is not None
    assert first_endpoint.port == second_endpoint.port == preferred
    assert first_endpoint.token == second_endpoint.token == "c" * 32
    assert kept == first_endpoint


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        '{"host": "10.0.0.5", "port": 8765, "token": "' + "a" * 32 + '"}',
        '{"host": "127.0.0.1", "port": 8765, "token": "short"}',
        '{"host": "127.0.0.1", "port": 99999, "token": "' + "a" * 32 + '"}',
    ],
)
async def test_an_invalid_file_is_replaced_with_a_warning(
    settings: BridgeSettings, content: str
) -> None:
    settings.endpoint_file.parent.mkdir(parents=True)
    settings.endpoint_file.write_text(content)

    async with GodotBridge(settings) as bridge:
        status = bridge.status()
        endpoint = bridge.endpoint

    assert endpoint is not None and endpoint.token != "a" * 32
    assert endpoint.port == settings.base_port
    assert read_endpoint(settings.endpoint_file).endpoint == endpoint
    assert len(status.warnings) == 1 and "was invalid" in status.warnings[0]


async def test_a_second_bridge_refuses_to_start_and_leaves_the_file_alone(
    bridge: GodotBridge, settings: BridgeSettings
) -> None:
    before = settings.endpoint_file.read_bytes()
    second = GodotBridge(settings)

    with pytest.raises(GodotError) as raised:
        await second.start()

    assert raised.value.code is GodotErrorCode.BRIDGE_ALREADY_RUNNING
    assert f"pid {os.getpid()}, port {bridge.port}" in raised.value.message
    assert str(settings.endpoint_file) in raised.value.message
    assert settings.endpoint_file.read_bytes() == before
    assert not second.running
    assert bridge.status().handshake_failures == 0


async def test_a_file_left_by_a_dead_bridge_is_taken_over(settings: BridgeSettings) -> None:
    stale = build_endpoint("127.0.0.1", settings.base_port + 1, "d" * 32, await dead_pid())
    write_endpoint(settings.endpoint_file, stale)

    async with GodotBridge(settings) as bridge:
        endpoint = bridge.endpoint

    assert endpoint is not None
    assert endpoint.pid == os.getpid()
    assert endpoint.token == "d" * 32
    assert endpoint.port == settings.base_port + 1


async def test_a_live_pid_whose_port_is_silent_does_not_block(
    make_bridge: MakeBridge, settings: BridgeSettings
) -> None:
    first = await make_bridge()
    port = first.port
    await first.stop()

    second = await make_bridge()

    assert second.running and second.port == port


def test_the_default_home_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path / "custom"))
    assert default_home() == tmp_path / "custom"
    monkeypatch.delenv("STAR_HARNESS_HOME")
    assert default_home() == Path.home() / ".star-harness"
    assert BridgeSettings().endpoint_file == Path.home() / ".star-harness/godot/endpoint.json"
    assert BridgeSettings().base_port == 8765 and BridgeSettings().port_span == 10


def test_the_bridge_listens_on_loopback_only() -> None:
    with pytest.raises(ValueError, match="loopback"):
        BridgeSettings(host="0.0.0.0")
