"""Requests per second of the mock LLM for a 200-token streamed answer, 100 conversations at once.

The mock runs in its own process pinned to one core; the load generator runs in this process
(pinned to another core where there is one) on raw asyncio sockets. A floor server, a bare
asyncio protocol that answers every request with the same pre-built bytes, is measured with the
same generator in the same run, so the ratio says how much of the ceiling the mock reaches.

Run: uv run python bench/mockllm_throughput.py [--seconds 5] [--concurrency 100] [--tokens 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import signal
import sys
import time
from dataclasses import dataclass
from multiprocessing.queues import Queue
from typing import Any

from cores import pin

GOAL_REQUESTS_PER_SECOND = 500.0
_CHARS_PER_TOKEN = 4


def _answer_text(tokens: int) -> str:
    words = "the quick brown fox jumps over a lazy dog near the old station "
    return (words * (tokens * _CHARS_PER_TOKEN // len(words) + 1))[: tokens * _CHARS_PER_TOKEN]


def _request_body() -> bytes:
    system = "You are a ship's quartermaster. " * 60
    tools = [
        {
            "type": "function",
            "function": {
                "name": f"tool_{index}",
                "description": "Does a thing the game allows. " * 4,
                "parameters": {
                    "type": "object",
                    "properties": {"amount": {"type": "integer"}, "item": {"type": "string"}},
                    "required": ["amount", "item"],
                },
            },
        }
        for index in range(4)
    ]
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": "What do you have for sale today?"},
    ]
    body = {"model": "mock-model", "stream": True, "messages": messages, "tools": tools}
    return json.dumps(body).encode()


def _request_bytes(port: int, conversation: int) -> bytes:
    body = _request_body()
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        f"X-Star-Harness-Session: bench-{conversation}\r\n\r\n"
    )
    return head.encode() + body


# -- servers (each in its own process) -------------------------------------------------------


def _serve(kind: str, tokens: int, ports: Queue[int]) -> None:
    pin(0)
    asyncio.run(_serve_async(kind, tokens, ports))


async def _serve_async(kind: str, tokens: int, ports: Queue[int]) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    if kind == "mock":
        from starharness.mockllm import MockLlmServer, Success

        async with MockLlmServer() as mock:
            mock.script_each([Success(text=_answer_text(tokens), chunk_size=4)], repeat_last=True)
            ports.put(mock.port)
            await stop.wait()
        return
    response = await _recorded_mock_response(tokens)
    server = await asyncio.get_running_loop().create_server(
        lambda: _FloorProtocol(response), "127.0.0.1", 0
    )
    ports.put(int(server.sockets[0].getsockname()[1]))
    await stop.wait()
    server.close()


async def _recorded_mock_response(tokens: int) -> bytes:
    """One real mock response, captured so the floor sends exactly the same bytes."""
    from starharness.mockllm import MockLlmServer, Success

    async with MockLlmServer() as mock:
        mock.script_each([Success(text=_answer_text(tokens), chunk_size=4)])
        reader, writer = await asyncio.open_connection("127.0.0.1", mock.port)
        writer.write(_request_bytes(mock.port, 0))
        response = await _read_one_response(reader)
        writer.close()
        return response


async def _read_one_response(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    body = b""
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.strip(), 16)
        chunk = await reader.readexactly(size + 2)
        body += size_line + chunk
        if size == 0:
            return head + body


class _FloorProtocol(asyncio.Protocol):
    """Answers each complete request with the same bytes; no parsing beyond framing."""

    def __init__(self, response: bytes) -> None:
        self._response = response
        self._buffer = b""
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        while True:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self._buffer[:end].lower()
            start = head.find(b"content-length:") + len(b"content-length:")
            length = int(head[start : head.find(b"\r\n", start)])
            total = end + 4 + length
            if len(self._buffer) < total:
                return
            self._buffer = self._buffer[total:]
            assert self._transport is not None
            self._transport.write(self._response)


# -- load generator --------------------------------------------------------------------------


@dataclass(slots=True)
class _Counter:
    completed: int = 0
    failed: int = 0
    bytes_received: int = 0


class _LoadProtocol(asyncio.Protocol):
    """Sends one request, reads one chunked response, repeats; counts complete answers."""

    def __init__(self, request: bytes, counter: _Counter, stop: asyncio.Event) -> None:
        self._request = request
        self._counter = counter
        self._stop = stop
        self._buffer = bytearray()
        self._transport: asyncio.Transport | None = None
        self.closed = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        transport.write(self._request)

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        self._counter.bytes_received += len(data)
        if not self._buffer.endswith(b"\r\n0\r\n\r\n"):
            return
        complete, ok = _parse_response(bytes(self._buffer))
        if not complete:
            return
        self._buffer.clear()
        if ok:
            self._counter.completed += 1
        else:
            self._counter.failed += 1
        assert self._transport is not None
        if self._stop.is_set():
            self._transport.close()
        else:
            self._transport.write(self._request)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


def _parse_response(data: bytes) -> tuple[bool, bool]:
    """(complete, ok) for a buffered chunked response."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return False, False
    ok = data.startswith(b"HTTP/1.1 200")
    position = end + 4
    body = bytearray()
    while True:
        line_end = data.find(b"\r\n", position)
        if line_end < 0:
            return False, False
        size = int(data[position:line_end], 16)
        if size == 0:
            return True, ok and body.rstrip().endswith(b"data: [DONE]")
        start = line_end + 2
        if len(data) < start + size + 2:
            return False, False
        body += data[start : start + size]
        position = start + size + 2


def _cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()  # noqa: PTH123, SIM115
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _load(port: int, concurrency: int, seconds: float, pid: int) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    counter = _Counter()
    stop = asyncio.Event()
    protocols: list[_LoadProtocol] = []
    for conversation in range(concurrency):
        request = _request_bytes(port, conversation)
        _, protocol = await loop.create_connection(
            lambda r=request: _LoadProtocol(r, counter, stop), "127.0.0.1", port
        )
        protocols.append(protocol)
    await asyncio.sleep(min(1.0, seconds / 4))  # warm-up
    start_count, start_cpu, start = counter.completed, _cpu_seconds(pid), time.perf_counter()
    await asyncio.sleep(seconds)
    elapsed = time.perf_counter() - start
    done, cpu = counter.completed - start_count, _cpu_seconds(pid) - start_cpu
    stop.set()
    await asyncio.wait([p.closed for p in protocols], timeout=10)
    return {
        "requests_per_second": done / elapsed,
        "requests_per_cpu_second": done / cpu if cpu else float("inf"),
        "server_cpu_share": cpu / elapsed,
        "failed": counter.failed,
    }


def _measure(kind: str, args: argparse.Namespace) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    ports: Queue[int] = context.Queue()
    process = context.Process(target=_serve, args=(kind, args.tokens, ports), daemon=True)
    process.start()
    try:
        port = ports.get(timeout=30)
        assert process.pid is not None
        return asyncio.run(_load(port, args.concurrency, args.seconds, process.pid))
    finally:
        process.terminate()
        process.join(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--tokens", type=int, default=200)
    args = parser.parse_args()
    pin(1)
    floor = _measure("floor", args)
    mock = _measure("mock", args)
    ratio = mock["requests_per_second"] / floor["requests_per_second"]
    print(f"{args.tokens}-token streamed answers, {args.concurrency} conversations, mock on 1 core")
    for name, result in (("floor (pre-built bytes)", floor), ("mock LLM", mock)):
        print(
            f"  {name:24s} {result['requests_per_second']:9.0f} req/s   "
            f"{result['requests_per_cpu_second']:9.0f} req/cpu-s   "
            f"server cpu {result['server_cpu_share']:4.0%}   failed {result['failed']}"
        )
    print(f"  mock / floor ratio        {ratio:9.2f}")
    goal_met = mock["requests_per_second"] >= GOAL_REQUESTS_PER_SECOND
    verdict = "met" if goal_met else "NOT met"
    print(f"  goal >= {GOAL_REQUESTS_PER_SECOND:.0f} req/s: {verdict}")
    sys.exit(0 if goal_met and not mock["failed"] else 1)


if __name__ == "__main__":
    main()
