"""A socket's way in: a request's head must arrive soon and small, and one address may hold
only so many sockets.

uvicorn starts no timer until a first response went out, accepts a request head of any size
when httptools parses it, and hands a WebSocket upgrade to the websockets parser, which refuses
a header line over 8 KiB or more than 128 headers without ever answering. A socket that sent
nothing or half a head stayed open for good (2,000 of them cost 2,000 descriptors), and an
oversized upgrade hung. `gated_http` wraps uvicorn's HTTP protocol (uvicorn's documented
`http=` option takes a protocol class): the wrapper is the socket's protocol for the socket's
whole life and the transport uvicorn's protocols write to, so it counts each socket until it
closes, also after uvicorn switched it to a WebSocket protocol. It reads the bytes as they pass,
and only the heads: the request line and headers are measured line by line, the body skipped by
its Content-Length, and once a WebSocket upgrade is through it just passes bytes on, a slice at
a time, and none while uvicorn's protocol has asked to read no more: one socket read can carry
tens of thousands of tiny frames, which parsed at once held the loop (150 ms for 24,000) and
all sat queued for the app. What a WebSocket's protocol writes in one pass of the loop leaves in
one send, at the start of the next pass.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from websockets.http11 import MAX_LINE_LENGTH, MAX_NUM_HEADERS

from .log_limit import LogLimiter

_log = logging.getLogger("starharness.npc.server")

DEFAULT_HEADER_TIMEOUT_S = 10.0
DEFAULT_MAX_HEADER_BYTES = 32 * 1024
DEFAULT_CONNECTIONS_PER_ADDRESS = 256
MAX_LINE_BYTES: int = MAX_LINE_LENGTH
"""A head line's most bytes with its line end: what the websockets parser takes (it refuses a
longer one without answering); 8,192 unless WEBSOCKETS_MAX_LINE_LENGTH says otherwise."""
MAX_HEADERS: int = MAX_NUM_HEADERS
"""The websockets parser's most header lines (128 unless WEBSOCKETS_MAX_NUM_HEADERS says)."""
UNCAPPED_BY_DEFAULT = ("127.0.0.0/8", "::1")
_LINGER_S = 1.0
_SLICE_BYTES = 4096
"""Bytes passed on at a time after the heads: at most a few hundred frames, parsed in a few ms."""
"""How long a refused socket is read (and its bytes dropped) before it is closed: closing a
socket with unread bytes resets it, and the client may never see the answer."""

# A socket's states: waiting for (the rest of) a head, in a body, between requests, passing
# bytes on (a WebSocket, or a body whose end is not read here), refused (answered, lingering).
_HEAD, _BODY, _IDLE, _PASS, _REFUSED = range(5)
_WEBSOCKET, _UPGRADE = 1, 2

_FULL = "the server is at its connection limit; try again shortly\n"
_NO_LINE = bytearray()
"""The line buffer of every socket past its heads (never written to)."""
_NO_EXTRA: dict[str, Any] = {}
"""The wrapper's own extra info, never read or written (asyncio makes an empty dict each)."""

_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class GateSettings:
    """How long a request's head and body may take, how large a head may be, how many
    sockets one address may hold (None: any number), and the addresses never capped."""

    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S
    max_header_bytes: int = DEFAULT_MAX_HEADER_BYTES
    connections_per_address: int | None = DEFAULT_CONNECTIONS_PER_ADDRESS
    uncapped: tuple[_Network, ...] = field(default_factory=lambda: networks(UNCAPPED_BY_DEFAULT))


def networks(addresses: Iterable[str]) -> tuple[_Network, ...]:
    """Addresses and CIDR blocks as networks; anything else (`*`, a socket path) is skipped."""
    found: list[_Network] = []
    for address in addresses:
        try:
            found.append(ipaddress.ip_network(address.strip(), strict=False))
        except ValueError:
            continue
    return tuple(found)


def trusted_proxies(forwarded_allow_ips: list[str] | str | None) -> tuple[_Network, ...]:
    """The proxies uvicorn trusts (`FORWARDED_ALLOW_IPS`): each carries many clients' sockets,
    so none is capped (`*` trusts everyone and names no proxy)."""
    if forwarded_allow_ips is None:
        return ()
    if isinstance(forwarded_allow_ips, str):
        forwarded_allow_ips = forwarded_allow_ips.split(",")
    return networks(forwarded_allow_ips)


def socket_budget() -> int | None:
    """How many sockets the process may hold open and still have descriptors to spare for
    its files, threads and the next accept (None: no limit known)."""
    try:
        import resource
    except ImportError:  # Windows: no descriptor limit to read
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return None
    return max(16, soft - max(64, soft // 10))


class GateState:
    """What the sockets of one server share: open sockets (per address and in all), and the
    shed counts."""

    __slots__ = ("_on_shed", "budget", "by_address", "limiter", "open", "settings", "shed")

    def __init__(
        self,
        settings: GateSettings,
        logger: logging.Logger = _log,
        on_shed: Callable[[str], None] | None = None,
    ) -> None:
        self.settings = settings
        self._on_shed = on_shed
        self.by_address: dict[str, int] = {}
        self.open = 0
        self.budget = socket_budget()
        """Past this many open sockets a new one is answered 503 and closed at once: at the
        descriptor limit `accept()` fails, and asyncio reports each failure with a traceback."""
        self.limiter = LogLimiter(logger)
        self.shed: dict[str, int] = {
            "header_timeout": 0,
            "header_too_large": 0,
            "over_cap": 0,
            "at_capacity": 0,
        }

    def address_key(self, peer: object) -> str | None:
        """What a peer is counted under: its IPv4 address, or its IPv6 /64 (one host's block);
        None for an uncapped one."""
        if self.settings.connections_per_address is None:
            return None
        if not isinstance(peer, tuple) or not peer or not isinstance(peer[0], str):
            return None  # a Unix socket: a local client
        try:
            address = ipaddress.ip_address(peer[0].split("%", 1)[0])
        except ValueError:
            return None
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if any(address in network for network in self.settings.uncapped):
            return None
        if isinstance(address, ipaddress.IPv6Address):
            return str(ipaddress.IPv6Network((address, 64), strict=False))
        return str(address)

    def shed_one(self, kind: str, message: str, *args: object) -> None:
        self.shed[kind] += 1
        if self._on_shed is not None:
            self._on_shed(kind)
        self.limiter.log(logging.WARNING, kind, message, *args)


def _answer(status: str, text: str) -> bytes:
    body = text.encode()
    return (
        f"HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode() + body


class GatedConnection(asyncio.Protocol, asyncio.Transport):
    """The protocol of one socket and the transport of uvicorn's protocol for it."""

    __slots__ = (
        "_feeding",
        "_framing",
        "_held",
        "_inner",
        "_key",
        "_line",
        "_lines",
        "_opened",
        "_out",
        "_paused",
        "_remaining",
        "_seen",
        "_state",
        "_timer",
        "_transport",
    )
    inner_class: ClassVar[type[asyncio.Protocol]]
    gate: ClassVar[GateState]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(_NO_EXTRA)  # its extra info is the socket's
        self._inner: asyncio.Protocol = self.inner_class(*args, **kwargs)
        self._opened = False
        """Whether uvicorn's protocol was told of the socket (a socket over its cap is not)."""
        self._transport: asyncio.Transport | None = None
        self._state = _HEAD
        self._timer: asyncio.TimerHandle | None = None
        self._key: str | None = None
        self._line = bytearray()
        """The head line read so far (at most MAX_LINE_BYTES)."""
        self._lines = 0
        self._seen = 0
        """Bytes of the current head read so far."""
        self._remaining = 0
        """Body bytes still to come."""
        self._framing: tuple[int | None, bool, int] = (None, False, 0)
        """The current head's Content-Length, whether it is chunked, and its upgrade bits
        (`Upgrade: websocket`, `Connection: upgrade`: only both together switch protocols)."""
        self._paused = False
        """Whether uvicorn's protocol asked to read no more (until it resumes reading)."""
        self._held = b""
        """Bytes read past the heads but not passed on yet: they wait for reading to resume."""
        self._feeding = False
        self._out: list[bytes] | None = None
        """A WebSocket's writes of this pass of the loop, sent as one at the start of the next
        (None: nothing waits)."""

    # -- the socket's side (a protocol) -------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        gate = self.gate
        gate.open += 1
        if gate.budget is not None and gate.open > gate.budget:
            gate.shed_one(
                "at_capacity",
                "refused a connection: %d sockets are open, as many as the descriptor limit "
                "allows (raise it with ulimit -n)",
                gate.open - 1,
            )
            self._state = _REFUSED
            # Closed at once, not after a linger: its descriptor is what is short.
            transport.write(_answer("503 Service Unavailable", _FULL))
            transport.close()
            return
        key = gate.address_key(transport.get_extra_info("peername"))
        cap = gate.settings.connections_per_address
        if key is not None and cap is not None:
            held = gate.by_address.get(key, 0)
            if held >= cap:
                gate.shed_one(
                    "over_cap", "refused a connection from %s: it holds %d already", key, held
                )
                self._refuse(
                    "429 Too Many Requests",
                    f"too many connections from your address: at most {cap} at once; "
                    "close some and retry\n",
                )
                return
            gate.by_address[key] = held + 1
            self._key = key
        self._arm()
        self._opened = True
        self._inner.connection_made(self)

    def data_received(self, data: bytes) -> None:
        state = self._state
        if state == _PASS:
            self._pass_on(data)
            return
        if state == _REFUSED:
            return
        passed = self._read(data)
        if passed:
            self._inner.data_received(data if passed == len(data) else data[:passed])
        if self._state == _PASS and passed < len(data):
            self._pass_on(data[passed:])  # what came with the head, after it

    def _pass_on(self, data: bytes) -> None:
        """Pass `data` on a slice at a time; once reading is paused, hold the rest."""
        if self._held:  # reading is paused: a read already under way still lands here
            self._held += data
            return
        size = len(data)
        start = 0
        while start < size:
            if self._paused:
                self._held = data[start:]
                return
            self._inner.data_received(data[start : start + _SLICE_BYTES])
            start += _SLICE_BYTES

    def _pass_held(self) -> None:
        self._feeding = False
        if self._transport is None or self._transport.is_closing():
            self._held = b""
            return
        held, self._held = self._held, b""
        self._pass_on(held)
        if not (self._held or self._paused):
            self._socket.resume_reading()

    def eof_received(self) -> bool | None:
        if self._state == _REFUSED:
            return False
        return self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._held = b""
        self._out = None
        self.gate.open -= 1
        key, self._key = self._key, None
        if key is not None:
            counts = self.gate.by_address
            left = counts.get(key, 1) - 1
            if left > 0:
                counts[key] = left
            else:
                counts.pop(key, None)
        if self._opened:
            self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()

    # -- reading heads ------------------------------------------------------------------------

    def _read(self, data: bytes) -> int:
        """Follow `data` through heads and bodies; how many of its bytes pass on from here:
        all, or up to where a head broke a limit (then the socket is answered and nothing more
        passes), or up to where bytes just pass (`_pass_on` takes the rest)."""
        at = 0
        size = len(data)
        while at < size:
            state = self._state
            if state == _PASS:
                return at
            if state == _IDLE:
                self._state = _HEAD
                self._seen = 0
                self._lines = 0
                self._framing = (None, False, 0)
                self._arm()
                continue
            if state == _BODY:
                taken = min(self._remaining, size - at)
                self._remaining -= taken
                at += taken
                if self._remaining == 0:
                    self._state = _IDLE
                    self._disarm()
                continue
            # A head: line by line.
            end = data.find(b"\n", at)
            stop = size if end < 0 else end + 1
            chunk = len(self._line) + stop - at
            self._seen += stop - at
            if chunk > MAX_LINE_BYTES:
                return self._too_large(at, f"a header line is longer than {MAX_LINE_BYTES} bytes")
            if self._seen > self.gate.settings.max_header_bytes:
                limit = self.gate.settings.max_header_bytes
                return self._too_large(at, f"the request's headers are over {limit} bytes")
            self._line += data[at:stop]
            at = stop
            if end < 0:
                break
            line = bytes(self._line).rstrip(b"\r\n")
            self._line.clear()
            if not self._head_line(line):
                return self._too_large(at, f"the request has more than {MAX_HEADERS} headers")
        return size

    def _head_line(self, line: bytes) -> bool:
        """Take one complete head line; False when the head has too many."""
        if not line:
            if self._lines == 0:
                return True  # blank lines before a request line are ignored (RFC 9112 2.2)
            self._head_done()
            return True
        self._lines += 1
        if self._lines > MAX_HEADERS + 1:
            return False
        if self._lines == 1:
            return True  # the request line
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        length, chunked, websocket = self._framing
        if name == b"content-length":
            digits = value.strip()
            length = int(digits) if digits.isdigit() and len(digits) < 19 else -1
        elif name == b"transfer-encoding":
            chunked = True
        elif name == b"upgrade" and b"websocket" in value.lower():
            websocket |= _WEBSOCKET
        elif name == b"connection" and b"upgrade" in value.lower():
            websocket |= _UPGRADE
        self._framing = (length, chunked, websocket)
        return True

    def _head_done(self) -> None:
        length, chunked, websocket = self._framing
        if websocket == _WEBSOCKET | _UPGRADE:
            # A WebSocket from here on (its pings find a dead peer): bytes just pass.
            self._become_pass(disarm=True)
        elif chunked or (length is not None and length < 0):
            # A body whose end is not read here (or a framing uvicorn will refuse): the
            # request's timer keeps running and ends the socket if it is not done by then.
            self._become_pass(disarm=False)
        elif length:
            self._state = _BODY
            self._remaining = length
        else:
            self._state = _IDLE
            self._disarm()

    def _become_pass(self, *, disarm: bool) -> None:
        self._state = _PASS
        self._line = _NO_LINE  # nothing is read into it any more: one empty one for all
        if disarm:
            self._disarm()

    def _too_large(self, passed: int, why: str) -> int:
        self.gate.shed_one("header_too_large", "refused a request: %s", why)
        self._refuse("431 Request Header Fields Too Large", f"refused: {why}\n")
        return passed

    # -- timers and refusals ------------------------------------------------------------------

    def _arm(self) -> None:
        if self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self.gate.settings.header_timeout_s, self._timed_out)

    def _disarm(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def _timed_out(self) -> None:
        self._timer = None
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        timeout = self.gate.settings.header_timeout_s
        self.gate.shed_one(
            "header_timeout", "closed a socket whose request did not arrive within %g s", timeout
        )
        if self._state == _HEAD and self._seen == 0:
            transport.close()  # nothing asked, nothing to answer (an idle pre-connect)
            return
        self._refuse("408 Request Timeout", f"refused: the request took over {timeout:g} s\n")

    def _refuse(self, status: str, text: str) -> None:
        """Answer, drop whatever else comes, and close soon (a refusal's linger)."""
        transport = self._transport
        assert transport is not None
        self._state = _REFUSED
        self._disarm()
        transport.write(_answer(status, text))
        self._timer = asyncio.get_running_loop().call_later(_LINGER_S, transport.close)

    # -- uvicorn's side (a transport) ---------------------------------------------------------

    def write(self, data: bytes | bytearray | memoryview) -> None:
        state = self._state
        if state == _PASS and self._framing[2] == _WEBSOCKET | _UPGRADE:
            # A WebSocket's frames of one pass leave in one send: a greeting's frames (and the
            # eight `encounter.opened` of eight opens read at once) were a syscall each, about
            # 30 us apiece on a small VM. They leave at the start of the next pass, before any
            # wait on the network.
            out = self._out
            if out is None:
                self._out = [bytes(data)]
                asyncio.get_running_loop().call_soon(self._flush)
            else:
                out.append(bytes(data))
        elif state != _REFUSED:
            self._socket.write(data)

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        for data in list_of_data:
            self.write(data)

    def _flush(self) -> None:
        out, self._out = self._out, None
        transport = self._transport
        if out and transport is not None and not transport.is_closing():
            transport.write(out[0] if len(out) == 1 else b"".join(out))

    @property
    def _socket(self) -> asyncio.Transport:
        transport = self._transport
        assert transport is not None
        return transport

    def close(self) -> None:
        self._flush()  # a close frame written just before leaves before the FIN
        self._socket.close()

    def abort(self) -> None:
        self._out = None
        self._socket.abort()

    def is_closing(self) -> bool:
        return self._socket.is_closing()

    def write_eof(self) -> None:
        self._flush()
        self._socket.write_eof()

    def can_write_eof(self) -> bool:
        return self._socket.can_write_eof()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._socket.get_extra_info(name, default)

    def get_write_buffer_size(self) -> int:
        waiting = sum(map(len, self._out)) if self._out else 0
        return self._socket.get_write_buffer_size() + waiting

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._socket.get_write_buffer_limits()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._socket.set_write_buffer_limits(high, low)

    def pause_reading(self) -> None:
        self._paused = True
        self._socket.pause_reading()

    def resume_reading(self) -> None:
        self._paused = False
        if self._held:
            # Passed on in a step of its own, not inside the app's `receive` that resumed us;
            # the socket stays paused until the held bytes are through.
            if not self._feeding:
                self._feeding = True
                asyncio.get_running_loop().call_soon(self._pass_held)
            return
        self._socket.resume_reading()

    def is_reading(self) -> bool:
        return self._socket.is_reading()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        # uvicorn's HTTP protocol hands the socket to its WebSocket protocol: this stays the
        # socket's protocol (and keeps counting it) and passes the bytes to the new one.
        assert isinstance(protocol, asyncio.Protocol)
        self._inner = protocol

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._inner


def gated_http(
    inner: type[asyncio.Protocol], settings: GateSettings, state: GateState | None = None
) -> type[GatedConnection]:
    """The protocol class for uvicorn's `http=`: `inner` (uvicorn's HTTP protocol) behind the
    gate, sharing one GateState (per-address counts, shed counts) across the server's sockets."""
    gate = state or GateState(settings)
    return type(
        "GatedConnection",
        (GatedConnection,),
        {"__slots__": (), "inner_class": inner, "gate": gate},
    )
