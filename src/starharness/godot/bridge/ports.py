"""Listening on the first free port of the fallback range."""

from __future__ import annotations

import asyncio
import errno
from collections.abc import Callable

from .. import errors

ProtocolFactory = Callable[[], asyncio.Protocol]

_ADDRESS_IN_USE = frozenset(
    code for code in (errno.EADDRINUSE, getattr(errno, "WSAEADDRINUSE", None)) if code is not None
)


def candidate_ports(preferred: int, base: int, span: int) -> list[int]:
    """Ports to try in order: inside the range they wrap around, outside they count up."""
    if base <= preferred < base + span:
        return [base + (preferred - base + step) % span for step in range(span)]
    return [preferred + step for step in range(span) if preferred + step <= 65_535]


async def listen_first_free(
    factory: ProtocolFactory, host: str, ports: list[int]
) -> tuple[asyncio.Server, int]:
    """Listen on the first port that is not in use; any other bind error is reported at once."""
    loop = asyncio.get_running_loop()
    for port in ports:
        try:
            server = await loop.create_server(factory, host, port)
        except OSError as exc:
            if exc.errno in _ADDRESS_IN_USE:
                continue
            raise errors.bind_failed(port, exc.strerror or str(exc)) from exc
        return server, port
    raise errors.ports_exhausted(min(ports, default=0), max(ports, default=0))
