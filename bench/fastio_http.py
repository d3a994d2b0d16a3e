"""The model transport's fast path against httpx2's own, CPU per request on one machine.

    uv run python bench/fastio_http.py [--n 2000] [--conc 1,50] [--repeat 3]

A local server (its own process, pinned to CPU 0 where there are two) answers every POST with
the same streamed chat completion (15 SSE events, chunked). The client (pinned to CPU 1) sends
`n` requests `conc` at a time through each transport, reading each answer to its end, as the
provider does, and prints its CPU per request (process time, median of the repeats):

- `stock`: what `llm_http_client` builds with STAR_HARNESS_STOCK_TRANSPORTS=1 (httpx2's own
  transport, at most 20 idle connections kept);
- `pool`: `starharness._fastio.ReusingTransport` on httpcore2's own (anyio) connections;
- `fast`: `ReusingTransport` as `llm_http_client` builds it by default: the pool over
  connections straight on asyncio that send each request in one write.

Each part of the fast path is kept only while it wins at least 20% (docs/runtime.md): the
`pool` column over `stock`, and `fast` over `pool`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time

import httpx2

from starharness._fastio import ReusingTransport
from starharness.runtime.llm.transport import STOCK_TRANSPORTS_ENV, llm_http_client

_EVENTS = [
    b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":'
    b'{"content":"word %d "}}]}\n\n' % index
    for index in range(14)
] + [b"data: [DONE]\n\n"]
_BODY = b"".join(b"%x\r\n%s\r\n" % (len(event), event) for event in _EVENTS) + b"0\r\n\r\n"
_ANSWER = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
    b"transfer-encoding: chunked\r\n\r\n" + _BODY
)
_PROMPT = b'{"model":"m","stream":true,"messages":[{"role":"user","content":"%s"}]}' % (b"x" * 2000)
_LIMITS = httpx2.Limits(max_connections=200, max_keepalive_connections=200)
_TIMEOUT = httpx2.Timeout(30.0)


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            await reader.readexactly(length)
            writer.write(_ANSWER)
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def _serve(port: int) -> None:
    server = await asyncio.start_server(_answer, "127.0.0.1", port, backlog=512)
    async with server:
        await server.serve_forever()


def _client(variant: str) -> httpx2.AsyncClient:
    if variant == "stock":
        os.environ[STOCK_TRANSPORTS_ENV] = "1"
        try:
            return llm_http_client(timeout=_TIMEOUT, limits=_LIMITS)
        finally:
            del os.environ[STOCK_TRANSPORTS_ENV]
    if variant == "pool":
        transport = ReusingTransport(ssl_context=None, limits=_LIMITS, fast_streams=False)
        return httpx2.AsyncClient(timeout=_TIMEOUT, transport=transport)
    return llm_http_client(timeout=_TIMEOUT, limits=_LIMITS)


async def _cpu_per_request(variant: str, url: str, n: int, conc: int) -> float:
    async with _client(variant) as client:

        async def one() -> None:
            request = client.build_request("POST", url, content=_PROMPT)
            response = await client.send(request, stream=True)
            try:
                async for _ in response.aiter_bytes():
                    pass
            finally:
                await response.aclose()

        async def lanes(count: int) -> None:
            todo = iter(range(count))

            async def lane() -> None:
                for _ in todo:
                    await one()

            await asyncio.gather(*(lane() for _ in range(conc)))

        await lanes(max(conc, 50))  # connections open and code warm before the clock starts
        start = time.process_time()
        await lanes(n)
        return (time.process_time() - start) / n


def main() -> None:
    parser = argparse.ArgumentParser(description="the model transport's fast path vs httpx2's own")
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--conc", default="1,50")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    pin = (os.cpu_count() or 1) >= 2 and hasattr(os, "sched_setaffinity")
    if args.serve:
        if pin:
            os.sched_setaffinity(0, {0})
        asyncio.run(_serve(args.serve))
        return
    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        port = spare.getsockname()[1]
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(port)])
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        if pin:
            os.sched_setaffinity(0, {1})
        url = f"http://127.0.0.1:{port}/v1/chat/completions"
        variants = ("stock", "pool", "fast")
        print(f"CPU per request, median of {args.repeat} (n={args.n}, pinned={pin})")
        print("| conc | stock ms | pool ms | fast ms | stock / pool | pool / fast | stock / fast |")
        print("|---|---|---|---|---|---|---|")
        for conc in map(int, args.conc.split(",")):
            runs: dict[str, list[float]] = {variant: [] for variant in variants}
            for _ in range(args.repeat):
                for variant in variants:  # interleaved, so a noisy moment hits all three
                    cpu = asyncio.run(_cpu_per_request(variant, url, args.n, conc))
                    runs[variant].append(cpu)
            stock, pool, fast = (statistics.median(runs[variant]) for variant in variants)
            print(
                f"| {conc} | {stock * 1e3:.3f} | {pool * 1e3:.3f} | {fast * 1e3:.3f} "
                f"| {stock / pool:.2f}x | {pool / fast:.2f}x | {stock / fast:.2f}x |"
            )
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
