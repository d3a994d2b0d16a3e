"""Is the bridge named by an endpoint file still alive?"""

from __future__ import annotations

import asyncio
import contextlib
import os

from .endpoint import EndpointFile


def pid_alive(pid: int) -> bool:
    """True when a process with `pid` exists (signal 0 probes without touching it)."""
    if pid <= 0:
        return False
    if os.name == "nt":
        # Signal 0 is CTRL_C_EVENT on Windows; leave the decision to the port probe.
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def port_answers(host: str, port: int, timeout_s: float) -> bool:
    """True when something accepts a TCP connection on host:port within `timeout_s`."""
    try:
        async with asyncio.timeout(timeout_s):
            _, writer = await asyncio.open_connection(host, port)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


async def live_bridge(endpoint: EndpointFile, timeout_s: float) -> bool:
    """A live bridge: the file names a pid that runs, and its port answers."""
    if endpoint.pid is None or not pid_alive(endpoint.pid):
        return False
    return await port_answers(endpoint.host, endpoint.port, timeout_s)
