"""Requests written by hand, for headers no HTTP client will send (two Hosts, a rebound name)."""

from __future__ import annotations

import socket


def raw_status(port: int, path: str, host: str | tuple[str, ...], upgrade: bool = False) -> int:
    """The status of one GET sent to 127.0.0.1:`port` with exactly these Host headers."""
    hosts = (host,) if isinstance(host, str) else host
    lines = [f"GET {path} HTTP/1.1", *(f"Host: {name}" for name in hosts), "Connection: close"]
    if upgrade:
        lines[-1] = "Connection: Upgrade"
        lines += [
            "Upgrade: websocket",
            "Sec-WebSocket-Version: 13",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            f"Origin: http://{hosts[0]}",
        ]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        status = sock.recv(4096).split(b"\r\n", 1)[0]
    return int(status.split()[1])
