"""Shared fixtures: a bridge on a private port range and fake editors that connect to it."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from godot_support import PORT_SPAN, ConnectEditor, MakeBridge, free_base_port

from starharness.godot import TOOL_NAMES, BridgeSettings, GodotBridge
from starharness.godot.testing import FakeAddon, FakeBehaviour


@pytest.fixture
def base_port() -> int:
    return free_base_port()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "game"
    folder.mkdir()
    return folder


@pytest.fixture
def settings(home: Path, base_port: int) -> BridgeSettings:
    return BridgeSettings(
        home=home,
        base_port=base_port,
        port_span=PORT_SPAN,
        enabled_tools=TOOL_NAMES,
        grace_period_ms=0,
        handshake_timeout_ms=5_000,
    )


@pytest.fixture
async def make_bridge(settings: BridgeSettings) -> AsyncIterator[MakeBridge]:
    """Start bridges with settings overrides; all are stopped after the test."""
    started: list[GodotBridge] = []

    async def make(**overrides: Any) -> GodotBridge:
        bridge = GodotBridge(dataclasses.replace(settings, **overrides))
        await bridge.start()
        started.append(bridge)
        return bridge

    yield make
    for bridge in started:
        await bridge.stop()


@pytest.fixture
async def bridge(make_bridge: MakeBridge) -> GodotBridge:
    return await make_bridge()


@pytest.fixture
async def connect_editor() -> AsyncIterator[ConnectEditor]:
    """Connect a fake editor through a bridge's endpoint file and wait until it is paired."""
    fakes: list[FakeAddon] = []

    async def connect(
        bridge: GodotBridge,
        project_path: Path | str,
        *,
        behaviour: FakeBehaviour | None = None,
    ) -> FakeAddon:
        fake = await FakeAddon.from_endpoint(
            bridge.settings.endpoint_file, project_path=str(project_path), behaviour=behaviour
        )
        fakes.append(fake)
        paired = sum(1 for c in bridge.status().clients if c.authenticated) + 1
        await fake.connect()
        paired_in_time = await bridge.wait_for_editors(paired, timeout_s=5.0, any_project=True)
        assert paired_in_time, "the fake editor did not pair with the bridge"
        return fake

    yield connect
    for fake in fakes:
        await fake.close()
