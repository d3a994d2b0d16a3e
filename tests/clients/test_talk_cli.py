"""`star-harness talk` as a real process: piped input, a pseudo-terminal, Ctrl-C, no server."""

from __future__ import annotations

import asyncio
import os
import pty
import re
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from frame_fakes import running_fake, up_types

ROOT = Path(__file__).resolve().parents[2]
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# The lead wires `talk` into the command; until then this registers it the same way.
_LAUNCH = """
import sys
from starharness.cli import app, run_cli, talk
if not any(command.name == "talk" for command in app.registered_commands):
    talk.register(app)
sys.exit(run_cli(sys.argv[1:]))
"""
_TIMEOUT_S = 30


def _command(*args: str) -> list[str]:
    return [sys.executable, "-c", _LAUNCH, "talk", *args]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_piped_input_completes_a_trade_and_exits_cleanly() -> None:
    async with running_fake() as harness:
        process = await asyncio.create_subprocess_exec(
            *_command("--url", harness.url, "--player", "p1"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        async with asyncio.timeout(_TIMEOUT_S):
            out, err = await process.communicate(b"1\n1\n")

    text = out.decode()
    assert process.returncode == 0, err.decode()
    assert err == b""
    assert "> 1\n" in text  # piped lines are echoed so the transcript reads like a session
    assert "✔ trade: You buy 1 ore." in text
    assert "HUD money: 100 → 60" in text
    assert text.rstrip().endswith("Bye.")
    assert up_types(harness) == ["hello", "encounter.open", "encounter.say", "encounter.close"]


async def test_an_unreachable_server_is_one_line_on_stderr() -> None:
    url = f"ws://127.0.0.1:{_closed_port()}/gh"
    process = await asyncio.create_subprocess_exec(
        *_command("--url", url),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    async with asyncio.timeout(_TIMEOUT_S):
        out, err = await process.communicate()

    assert process.returncode == 2
    assert out == b""
    assert err.decode().splitlines() == [
        f"error: cannot reach {url}: connection refused (is the server running?)"
    ]


async def test_a_missing_token_variable_is_one_line_on_stderr() -> None:
    process = await asyncio.create_subprocess_exec(
        *_command("--token-env", "STAR_HARNESS_TEST_UNSET_TOKEN"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "STAR_HARNESS_TEST_UNSET_TOKEN"},
    )
    async with asyncio.timeout(_TIMEOUT_S):
        _, err = await process.communicate()

    assert process.returncode == 2
    assert err.decode().splitlines() == [
        "error: STAR_HARNESS_TEST_UNSET_TOKEN is not set: it must hold the server's auth token"
    ]


def _interruptible() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class _Terminal:
    """A child process on a pseudo-terminal, read as plain text (colours stripped)."""

    def __init__(self, args: list[str]) -> None:
        self._master, slave = pty.openpty()
        self.process = subprocess.Popen(
            args,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=ROOT,
            close_fds=True,
            # As in a terminal: a runner that ignores SIGINT (a background job of a script) would
            # pass that on, and the child would never see Ctrl-C.
            preexec_fn=_interruptible,
        )
        os.close(slave)
        self.text = ""

    def _read_until(self, needle: str, deadline: float) -> None:
        while needle not in _ANSI.sub("", self.text):
            ready, _, _ = select.select([self._master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(self._master, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk:
                    break
                self.text += chunk.decode(errors="replace")
            elif time.monotonic() > deadline:
                break
        assert needle in _ANSI.sub("", self.text), f"no {needle!r} in:\n{self.plain}"

    async def expect(self, needle: str) -> None:
        await asyncio.to_thread(self._read_until, needle, time.monotonic() + _TIMEOUT_S)

    def type(self, line: str) -> None:
        os.write(self._master, line.encode() + b"\n")

    @property
    def plain(self) -> str:
        return _ANSI.sub("", self.text).replace("\r\n", "\n")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        os.close(self._master)


async def test_a_terminal_session_streams_picks_options_and_stops_on_ctrl_c() -> None:
    async with running_fake() as harness:
        terminal = _Terminal(_command("--url", harness.url, "--player", "p1", "--npc", "n1"))
        try:
            await terminal.expect("Ada: Well, hello there.")
            await terminal.expect("2) Buy a ship for 9000")
            await terminal.expect("> ")
            terminal.type("2")
            await terminal.expect("✘ trade refused: Not enough money")
            await terminal.expect("Ada: Come back richer.")
            terminal.process.send_signal(signal.SIGINT)
            await terminal.expect("Bye.")
            returncode = await asyncio.to_thread(terminal.process.wait, _TIMEOUT_S)
        finally:
            terminal.close()

    assert returncode == 130, terminal.plain
    assert "Traceback" not in terminal.plain
    # The typed line is echoed by the terminal itself, not printed twice by the client.
    assert terminal.plain.count("> 2") == 1
    assert up_types(harness)[:3] == ["hello", "encounter.open", "encounter.say"]
