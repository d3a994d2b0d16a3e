"""Helpers shared by the Godot bridge tests (types and a free port range)."""

from __future__ import annotations

import asyncio
import random
import socket
import sys
from collections.abc import Awaitable, Callable

from starharness.godot import GodotBridge
from starharness.godot.testing import FakeAddon

PORT_SPAN = 10

ConnectEditor = Callable[..., Awaitable[FakeAddon]]
MakeBridge = Callable[..., Awaitable[GodotBridge]]


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_base_port(span: int = PORT_SPAN) -> int:
    """A base port whose whole range is free, below the kernel's ephemeral range."""
    for _ in range(200):
        base = random.randrange(20_000, 30_000 - span)
        if all(_bindable(base + offset) for offset in range(span)):
            return base
    raise RuntimeError("no free port range found")


async def eventually(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    """Wait for a condition the bridge reaches on its own (no event exists to await)."""
    for _ in range(int(timeout_s / 0.005)):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the condition did not hold in time")


async def dead_pid() -> int:
    """The pid of a process that has already exited."""
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await process.wait()
    return process.pid
