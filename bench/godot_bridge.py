"""Ping round trips through the Godot bridge against a raw loopback echo, in the same run.

The editor side runs in child processes, as Godot would: a fake addon paired through the
endpoint file, and a bare line echo. Both connect out to this process, like the real addon.
Echo and bridge round trips alternate call by call, so both see the same machine load (core
placement alone moves loopback latency by 2x here). Goal: bridge p50 within 2x of the echo.

    uv run python bench/godot_bridge.py [--rounds 3] [--calls 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from starharness.godot import TOOL_NAMES, BridgeSettings, GodotBridge
from starharness.godot.testing import FakeAddon

PING_LINE = b'{"id":"0123456789abcdef0123456789abcdef","method":"ping"}\n'


async def _serve_echo(port: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    while line := await reader.readline():
        writer.write(line)
    writer.close()


async def _serve_addon(endpoint: Path, project: str) -> None:
    fake = await FakeAddon.from_endpoint(endpoint, project_path=project)
    await fake.connect()
    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.read)
    await fake.close()


async def _child(*arguments: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        *arguments,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )


async def _finish(process: asyncio.subprocess.Process) -> None:
    if process.stdin is not None:
        process.stdin.close()
    try:
        async with asyncio.timeout(5):
            await process.wait()
    except TimeoutError:
        process.kill()
        await process.wait()


class _Echo:
    """The echo child's connection: one line out, the same line back."""

    def __init__(self) -> None:
        self._accepted: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = (
            asyncio.get_running_loop().create_future()
        )
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._accepted.set_result((reader, writer))

    async def ready(self) -> None:
        self.reader, self.writer = await self._accepted

    async def round_trip(self) -> float:
        assert self.reader is not None and self.writer is not None
        started = time.perf_counter()
        self.writer.write(PING_LINE)
        await self.reader.readline()
        return time.perf_counter() - started


async def _bridge_round_trip(bridge: GodotBridge) -> float:
    started = time.perf_counter()
    await bridge.call("ping")
    return time.perf_counter() - started


def _percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def _measure(rounds: int, calls: int) -> None:
    echo = _Echo()
    echo_server = await asyncio.start_server(echo.accept, "127.0.0.1", 0)
    echo_port = echo_server.sockets[0].getsockname()[1]
    echo_p50: list[float] = []
    echo_p99: list[float] = []
    bridge_p50: list[float] = []
    bridge_p99: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        settings = BridgeSettings(home=Path(scratch), base_port=28_765, enabled_tools=TOOL_NAMES)
        async with GodotBridge(settings) as bridge:
            echo_child = await _child("--serve-echo", str(echo_port))
            addon = await _child("--serve-addon", str(settings.endpoint_file), scratch)
            try:
                await echo.ready()
                if not await bridge.wait_for_editors(1, timeout_s=10):
                    raise SystemExit("the fake addon did not pair with the bridge")
                for round_number in range(rounds + 1):
                    echo_samples: list[float] = []
                    bridge_samples: list[float] = []
                    for _ in range(calls if round_number else calls // 10):
                        echo_samples.append(await echo.round_trip())
                        bridge_samples.append(await _bridge_round_trip(bridge))
                    if round_number == 0:
                        continue  # warm-up
                    for samples, p50s, p99s in (
                        (echo_samples, echo_p50, echo_p99),
                        (bridge_samples, bridge_p50, bridge_p99),
                    ):
                        p50, p99 = _percentiles(samples)
                        p50s.append(p50)
                        p99s.append(p99)
            finally:
                if echo.writer is not None:
                    echo.writer.close()
                await _finish(addon)
                await _finish(echo_child)
    echo_server.close()
    await echo_server.wait_closed()
    _report(echo_p50, echo_p99, bridge_p50, bridge_p99, rounds, calls)


def _report(
    echo_p50: list[float],
    echo_p99: list[float],
    bridge_p50: list[float],
    bridge_p99: list[float],
    rounds: int,
    calls: int,
) -> None:
    def micro(values: list[float]) -> float:
        return statistics.median(values) * 1e6

    ratio50 = micro(bridge_p50) / micro(echo_p50)
    ratio99 = micro(bridge_p99) / micro(echo_p99)
    print(f"ping round trips: {rounds} rounds x {calls} calls, interleaved (median of rounds)")
    print(f"  raw loopback echo   p50 {micro(echo_p50):8.1f} us   p99 {micro(echo_p99):8.1f} us")
    bridge50, bridge99 = micro(bridge_p50), micro(bridge_p99)
    print(f"  bridge -> addon     p50 {bridge50:8.1f} us   p99 {bridge99:8.1f} us")
    print(f"  ratio               p50 {ratio50:8.2f}x     p99 {ratio99:8.2f}x   (goal <= 2x)")
    print("  verdict:", "within goal" if ratio50 <= 2.0 else "OVER the 2x goal")


def main() -> None:
    """Run the bench, or one of its child processes."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=2_000)
    parser.add_argument("--serve-echo", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--serve-addon", nargs=2, metavar=("ENDPOINT", "PROJECT"))
    options = parser.parse_args()
    if options.serve_echo:
        asyncio.run(_serve_echo(options.serve_echo))
    elif options.serve_addon:
        asyncio.run(_serve_addon(Path(options.serve_addon[0]), options.serve_addon[1]))
    else:
        asyncio.run(_measure(options.rounds, options.calls))


if __name__ == "__main__":
    main()
