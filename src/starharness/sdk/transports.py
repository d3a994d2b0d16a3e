"""Line transports for the SDK: a `star-harness rpc` child process, or any pair of streams."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

MAX_LINE = 16 * 1024 * 1024


class LineTransport(Protocol):
    """Sends and receives one protocol message per line."""

    async def send(self, line: str) -> None: ...

    async def receive(self) -> str | None:
        """The next line, or None when the other side has gone."""
        ...

    async def aclose(self) -> int | None:
        """Close; a child process's exit code when there is one."""
        ...


class StreamTransport:
    """Over an asyncio reader and writer (a socket, a pipe pair)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    async def send(self, line: str) -> None:
        self._writer.write(line.encode("utf-8") + b"\n")
        await self._writer.drain()

    async def receive(self) -> str | None:
        raw = await self._reader.readline()
        return raw.decode("utf-8") if raw else None

    async def aclose(self) -> int | None:
        self._writer.close()
        with contextlib.suppress(ConnectionError):
            await self._writer.wait_closed()
        return None


def rpc_command(
    profile: str = "task",
    *,
    patches: Sequence[str | os.PathLike[str]] = (),
    project: str | os.PathLike[str] | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """The argv of `star-harness rpc` with this interpreter (no reliance on PATH)."""
    argv = [sys.executable, "-m", "starharness.cli", "rpc", "--profile", profile]
    for patch in patches:
        argv += ["--patch", str(patch)]
    if project is not None:
        argv += ["--project", str(project)]
    return [*argv, *extra]


class ChildProcessTransport:
    """Starts `star-harness rpc` (or `argv`) and speaks over its stdin and stdout."""

    def __init__(self, process: asyncio.subprocess.Process, stop_timeout_s: float) -> None:
        self.process = process
        self._stop_timeout_s = stop_timeout_s
        assert process.stdin is not None and process.stdout is not None
        self._stdin = process.stdin
        self._stdout = process.stdout

    @classmethod
    async def start(
        cls,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        stderr: int | None = None,
        stop_timeout_s: float = 10.0,
    ) -> ChildProcessTransport:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            limit=MAX_LINE,
        )
        return cls(process, stop_timeout_s)

    async def send(self, line: str) -> None:
        self.send_nowait(line)
        await self._stdin.drain()

    def send_nowait(self, line: str) -> None:
        """Queue the line on the pipe now (the transport buffers what the pipe cannot take)."""
        self._stdin.write(line.encode("utf-8") + b"\n")

    async def receive(self) -> str | None:
        raw = await self._stdout.readline()
        return raw.decode("utf-8") if raw else None

    async def aclose(self) -> int | None:
        """End of input asks the server to stop; it is killed if it has not within the timeout."""
        if self.process.returncode is None:
            with contextlib.suppress(ConnectionError):
                self._stdin.close()
            try:
                await asyncio.wait_for(self.process.wait(), self._stop_timeout_s)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        return self.process.returncode


class WebSocketTransport:
    """To a running `star-harness web` (its `/rpc` endpoint): one message per text frame."""

    def __init__(self, connection: ClientConnection) -> None:
        self._connection = connection

    @classmethod
    async def open(cls, url: str, *, token: str | None = None) -> WebSocketTransport:
        headers = {"Authorization": f"Bearer {token}"} if token else None
        connection = await connect(
            url, additional_headers=headers, max_size=MAX_LINE, proxy=None, open_timeout=30
        )
        return cls(connection)

    async def send(self, line: str) -> None:
        await self._connection.send(line)

    async def receive(self) -> str | None:
        try:
            message = await self._connection.recv()
        except ConnectionClosed:
            return None
        return message if isinstance(message, str) else message.decode("utf-8")

    async def aclose(self) -> int | None:
        await self._connection.close()
        return None
