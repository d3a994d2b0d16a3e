"""Which WebSocket protocol a server hands to uvicorn's `ws=`: the lean one, or uvicorn's own.

The lean protocol (`ws_lean.py`) subclasses uvicorn's `websockets-sansio` protocol and reads
the websockets library's parser insides, so it is chosen only where it was tested: uvicorn and
websockets within `TESTED`. Outside that range (a newer release), or with
`STAR_HARNESS_STOCK_TRANSPORTS=1`, the server runs uvicorn's own protocol, the same one the
lean protocol trims, with one log line saying why: no upper pin on either library is needed.
Its module is imported only once it is chosen, so a release that moved it breaks nothing.
`bench/ws_heap.py` prints both protocols' heap per idle connection in the same run.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from importlib import metadata

STOCK_PROTOCOL = "websockets-sansio"
"""uvicorn's own protocol on the websockets library's sans-I/O core (its `ws=` name)."""
TESTED: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "uvicorn": ((0, 54), (0, 55)),
    "websockets": ((17,), (18,)),
}
"""For each library, the releases the lean protocol was tested on: from (inclusive), to."""
_STOCK_ENV = "STAR_HARNESS_STOCK_TRANSPORTS"
_RELEASE = re.compile(r"\d+(?:\.\d+)*")

_log = logging.getLogger("starharness.fastio")
_told: set[str] = set()


def websocket_protocol() -> type[asyncio.Protocol] | str:
    """The lean protocol class where it was tested, else uvicorn's own (by its `ws=` name)."""
    if os.environ.get(_STOCK_ENV, "").strip().lower() in ("1", "true", "yes"):
        return STOCK_PROTOCOL
    for library, (low, high) in TESTED.items():
        found = release(installed(library))
        if found is None or not low <= found < high:
            _tell_once(
                f"{library} {installed(library)} is outside the releases the lean WebSocket "
                f"protocol was tested on ({_range(low, high)}): serving with uvicorn's own "
                f"({STOCK_PROTOCOL}), which keeps more per open connection"
            )
            return STOCK_PROTOCOL
    from .ws_lean import LeanWebSocketProtocol

    return LeanWebSocketProtocol


def installed(library: str) -> str:
    """The installed release of `library` ("" when it is not installed)."""
    try:
        return metadata.version(library)
    except metadata.PackageNotFoundError:
        return ""


def release(version: str) -> tuple[int, ...] | None:
    """A version's leading numbers (`0.54.0rc1` is (0, 54, 0)); None when it has none."""
    found = _RELEASE.match(version.strip())
    if found is None:
        return None
    return tuple(int(part) for part in found.group().split("."))


def _range(low: tuple[int, ...], high: tuple[int, ...]) -> str:
    return f">={'.'.join(map(str, low))},<{'.'.join(map(str, high))}"


def _tell_once(line: str) -> None:
    if line not in _told:
        _told.add(line)
        _log.warning("%s", line)
