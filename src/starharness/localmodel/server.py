"""llama.cpp's OpenAI-compatible server as a child process that this process owns."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Final, Self

import httpx

from .chat_prompt import CHAT_FORMAT_NAME
from .errors import INSTALL_HINT, LocalModelError
from .gguf import server_installed

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8000
"""llama.cpp's Python server's own default, so the `llama-cpp` profile finds it unconfigured."""
DEFAULT_CONTEXT: Final = 8192
"""SmolLM2's trained context; the server's default (2048) cannot hold an NPC's prompt."""
CHAT_FORMAT: Final = CHAT_FORMAT_NAME
"""This package's chat handler (`chat_prompt`): `chatml-function-calling`'s tool-call shape and
grammar-constrained forced calls, without HTML escaping and with a prefix the server's cache
keeps across steps and NPCs; like it, it shows the model no tool results."""
_SPIN_COUNT: Final = 2_000
"""Spins of an OpenMP thread at a barrier before it sleeps. Per generated token of the 1.5B
model on two cores: idle, 90-93 ms against 116-125 ms asleep at once (20,000: 77-86 ms); beside
seven busy processes, 565 ms against 512-640 ms (20,000: 1.3-1.8 s, the spinning default's
trouble again). Prompt batches took the same time with all three."""
_WARM_UP_BODY: Final = {
    "messages": [{"role": "user", "content": "Say hello."}],
    "max_tokens": 2,
    "stream": False,
}
DEFAULT_STATE_CACHE_MB: Final = 1024
"""About twenty NPC prompts of 2,000 tokens for a 1.5B model (29 KB of state per token)."""
DEFAULT_BATCH_TOKENS: Final = 128
"""As fast as 512 on a CPU, and the buffers a batch needs (its logits are batch x vocabulary
floats: 78 MB instead of 311 MB for a 150k vocabulary) are a quarter the size."""
_POLL_S = 0.2
_STOP_GRACE_S = 10.0
_TAIL_LINES = 20


@dataclass(frozen=True, slots=True)
class LocalServerSettings:
    """What to serve and where."""

    model: Path
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    """0 picks a free port."""
    context_tokens: int = DEFAULT_CONTEXT
    chat_format: str = CHAT_FORMAT
    start_timeout_s: float = 120.0
    threads: int | None = None
    """Threads for generation and prompt processing; None: every core this process may use."""
    log_file: Path | None = None
    """Where the server's own output goes; None keeps only its last lines (for errors)."""
    server_command: tuple[str, ...] | None = None
    """What runs the server, before its flags; None: this interpreter's `llama_cpp.server` with
    this package's chat handler registered (`llama_child`)."""
    state_cache_mb: int | None = DEFAULT_STATE_CACHE_MB
    """The server's prompt-state cache (`--cache`): evaluated prompts kept in RAM, so several
    NPCs' prompts survive each other's turns; its budget in MB of model state. None: off."""
    batch_tokens: int | None = DEFAULT_BATCH_TOKENS
    """Prompt tokens evaluated per batch (`--n_batch`, `--n_ubatch`); None: the server's 512."""

    def command(self, port: int) -> list[str]:
        """The child's command line: the server command, then llama.cpp's server flags."""
        runner = self.server_command or (sys.executable, "-m", "starharness.localmodel.llama_child")
        return [
            *runner,
            "--model",
            str(self.model),
            "--chat_format",
            self.chat_format,
            "--host",
            self.host,
            "--port",
            str(port),
            "--n_ctx",
            str(self.context_tokens),
            # The server's own default is half the cores: 6.7 instead of 10.7 tokens/s on two.
            "--n_threads",
            str(threads := self.threads or available_cores()),
            "--n_threads_batch",
            str(threads),
            # Logits of the last token only: the server's default keeps every prompt token's
            # (600 KB each for a 150k vocabulary), which costs compute and gigabytes of RAM
            # and which nothing here reads (no logprobs).
            "--logits_all",
            "false",
            # One request at a time, in turn. The server's default cuts a running stream the
            # moment another request arrives: an NPC's line ended mid-sentence when a second
            # player spoke, and a prefix being warmed was thrown away (its state is saved
            # only when its request completes), so the next greeting evaluated it all again.
            "--interrupt_requests",
            "false",
            *self._cache_flags(),
        ]

    def _cache_flags(self) -> list[str]:
        flags: list[str] = []
        if self.batch_tokens is not None:
            flags += ["--n_batch", str(self.batch_tokens), "--n_ubatch", str(self.batch_tokens)]
        if self.state_cache_mb is not None:
            size = self.state_cache_mb * 1024 * 1024
            flags += ["--cache", "true", "--cache_type", "ram", "--cache_size", str(size)]
        return flags


class LocalModelServer:
    """Starts the server, waits until it answers, and stops it (and only it) on exit."""

    def __init__(self, settings: LocalServerSettings) -> None:
        self.settings = settings
        self._process: asyncio.subprocess.Process | None = None
        self._port = settings.port
        self._tail: deque[str] = deque(maxlen=_TAIL_LINES)
        self._reader: asyncio.Task[None] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (ends in /v1) to give a provider."""
        host = self.settings.host
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self._port}/v1"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        """Spawn the server and return once it has answered one real completion.

        `/v1/models` answers before the model has computed anything; a build for the wrong CPU
        dies only on its first completion, so that is what is waited for. LocalModelError
        otherwise.
        """
        if self.settings.server_command is None and not server_installed():
            raise LocalModelError(
                f"llama-cpp-python (with its server) is not installed: run `{INSTALL_HINT}`"
            )
        if self._port == 0:
            self._port = await asyncio.to_thread(_free_port, self.settings.host)
        else:
            await asyncio.to_thread(_check_port_free, self.settings.host, self._port)
        log = self.settings.log_file
        self._process = await asyncio.create_subprocess_exec(
            *self.settings.command(self._port),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env=_child_environment(),
            # Its own session: a Ctrl-C meant for us does not reach it; we stop it ourselves.
            start_new_session=True,
        )
        self._reader = asyncio.get_running_loop().create_task(
            self._read_output(log), name="local model server output"
        )
        try:
            await self._wait_ready()
        except BaseException:
            await self.stop()
            raise

    async def _read_output(self, log: Path | None) -> None:
        process = self._process
        assert process is not None and process.stdout is not None
        handle = await asyncio.to_thread(log.open, "ab") if log is not None else None
        try:
            while raw := await process.stdout.readline():
                self._tail.append(raw.decode("utf-8", "replace").rstrip())
                if handle is not None:
                    await asyncio.to_thread(_append, handle, raw)
        finally:
            if handle is not None:
                await asyncio.to_thread(handle.close)

    async def _wait_ready(self) -> None:
        process = self._process
        assert process is not None
        deadline = time.monotonic() + self.settings.start_timeout_s
        url = self.base_url + "/models"
        async with httpx.AsyncClient(timeout=2.0, trust_env=False) as client:
            while True:
                if process.returncode is not None:
                    await self._drain_reader()
                    raise LocalModelError(
                        f"the model server exited with code {process.returncode} before it was "
                        f"ready: {self._last_words()}"
                    )
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(url)).status_code == 200:
                        break
                if time.monotonic() > deadline:
                    raise LocalModelError(
                        f"the model server did not answer {url} within "
                        f"{self.settings.start_timeout_s:g} s: {self._last_words()}"
                    )
                await asyncio.sleep(_POLL_S)
        await self._warm_up(deadline)

    async def _warm_up(self, deadline: float) -> None:
        """One real completion, so a server that dies computing is caught before `ready`."""
        process = self._process
        assert process is not None
        url = self.base_url + "/chat/completions"
        timeout = max(deadline - time.monotonic(), 5.0)
        async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
            try:
                answer = await client.post(url, json=_WARM_UP_BODY)
            except httpx.HTTPError as exc:
                answer = None
                failure = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            else:
                failure = f"HTTP {answer.status_code}: {answer.text[:200]}"
        if answer is not None and answer.status_code == 200:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), 2.0)
        if process.returncode is not None:
            await self._drain_reader()
            how = describe_exit(process.returncode)
            raise LocalModelError(
                f"the model server died on its first completion ({how}): {self._last_words()}"
            )
        raise LocalModelError(f"the model server failed its first completion ({failure})")

    def last_words(self) -> str:
        """The server's last non-empty output lines, joined on one line."""
        return self._last_words()

    async def wait(self) -> int:
        """Wait for the server to exit by itself; its exit code."""
        process = self._process
        if process is None:
            raise RuntimeError("the model server was not started")
        return await process.wait()

    async def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after a grace period); safe to call twice."""
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            try:
                await asyncio.wait_for(process.wait(), _STOP_GRACE_S)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        self._process = process
        await self._drain_reader()

    async def _drain_reader(self) -> None:
        reader, self._reader = self._reader, None
        if reader is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(reader), 2.0)
        except TimeoutError:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader

    def _last_words(self) -> str:
        lines = [line for line in self._tail if line.strip()]
        return " | ".join(lines[-3:]) if lines else "it printed nothing"


def _child_environment() -> dict[str, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # its lines reach the log as printed
    # llama.cpp's threads meet at a barrier after every operation; OpenMP's default is to spin
    # there. When anything else wants the cores (the game itself, another model, a build),
    # a thread spins on a core the thread it waits for needs: 3.7-4.4 s per generated token
    # for the 1.5B model on two cores at load 8, 0.2 s with threads that sleep instead.
    # Threads that sleep at once pay a wake-up at each of those barriers: a short spin first
    # (GNU OpenMP's GOMP_SPINCOUNT, which the llama.cpp builds here link; it overrides the
    # policy) made a generated token about 25% faster on idle cores and no slower on busy
    # ones (`_SPIN_COUNT`). Other OpenMP runtimes read only the policy and sleep.
    if "OMP_WAIT_POLICY" not in env and "GOMP_SPINCOUNT" not in env:
        env["GOMP_SPINCOUNT"] = str(_SPIN_COUNT)
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return env


def _append(handle: BinaryIO, raw: bytes) -> None:
    # Flushed per line: the log is read while the server runs (`tail -f`, the first-word bench).
    handle.write(raw)
    handle.flush()


def available_cores() -> int:
    """The cores this process may run on (its affinity), at least one."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return max(os.cpu_count() or 1, 1)


def describe_exit(code: int) -> str:
    """An exit code as people read it: `exit code 3` or `killed by SIGSEGV`."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _free_port(host: str) -> int:
    with socket.socket(_family(host), socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


def _check_port_free(host: str, port: int) -> None:
    with socket.socket(_family(host), socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise LocalModelError(
                f"cannot serve on {host}:{port}: {exc.strerror or exc}; choose another --port"
            ) from None


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET
