"""The code-mode runner: runs inside the sandbox as `python -I -S -B -c <this file's text>`.

It imports only the standard library (the host package is neither on its path nor readable).
The host sends one JSON line on stdin: {"program", "tools", "limits"}. The runner sets the
limits, then runs the program with `tools` in its globals; each `tools.NAME(**args)` is one JSON
line to the host and one answer back. The program's own output (print, stdout, stderr) goes to
stderr, which the host keeps apart from the protocol. The last line says how the program ended.
"""

from __future__ import annotations

import io
import json
import os
import resource
import sys
import traceback
from collections.abc import Callable
from typing import Any, TextIO

_MB = 1024 * 1024

# Audit events that start a process: the program calls the host through `tools`, never another
# program. The PID namespace and the host's kill of the whole group are the backstop.
_BLOCKED_EVENTS = frozenset(
    {
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.exec",
        "os.spawn",
        "os.system",
        "subprocess.Popen",
        "pty.spawn",
    }
)
# Native code would step around the audit hook; the host's package is not the program's API.
_BLOCKED_IMPORTS = ("ctypes", "_ctypes", "_posixsubprocess", "starharness")


class ToolError(Exception):
    """A host tool call failed: `code` is the tool's failure code, the message its error text."""

    def __init__(self, tool: str, code: str, message: str) -> None:
        super().__init__(f"{tool} failed ({code}): {message}")
        self.tool = tool
        self.code = code
        self.message = message


class Blocked(PermissionError):
    """The program tried something code mode does not allow (a process, native code)."""


class _Channel:
    """The JSON-lines pipe to the host, on file descriptors the program's print does not use."""

    def __init__(self, reader: TextIO, writer: TextIO) -> None:
        self._reader = reader
        self._writer = writer
        self._next = 0

    def send(self, message: dict[str, Any]) -> None:
        self._writer.write(json.dumps(message, separators=(",", ":")) + "\n")
        self._writer.flush()

    def call(self, tool: str, args: dict[str, Any]) -> Any:
        self._next += 1
        self.send({"call": self._next, "tool": tool, "args": args})
        line = self._reader.readline()
        if not line:
            raise SystemExit("the host closed the tool pipe")
        answer = json.loads(line)
        if "fatal" in answer:
            # The host ended the run (a limit or a protocol error); nothing more may be called.
            raise SystemExit(str(answer["fatal"]))
        if answer.get("ok"):
            return answer.get("value")
        raise ToolError(tool, str(answer.get("code", "error")), str(answer.get("message", "")))


class Tools:
    """The program's API: `tools.NAME(**args)` calls host tool NAME and returns its value."""

    def __init__(self, channel: _Channel, names: list[str]) -> None:
        self._channel = channel
        self.names: tuple[str, ...] = tuple(names)
        """The host tools this program may call."""

    def call(self, name: str, args: dict[str, Any] | None = None, /, **kwargs: Any) -> Any:
        """Call host tool `name` with `args` (or keyword arguments); raises ToolError on failure."""
        arguments = {**(args or {}), **kwargs}
        if name not in self.names:
            raise ToolError(name, "not_allowed", f"no such tool here; these are: {self.names}")
        return self._channel.call(name, arguments)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)

        def call(**kwargs: Any) -> Any:
            return self.call(name, kwargs)

        call.__name__ = name
        return call


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event in _BLOCKED_EVENTS:
        raise Blocked(f"{event} is not allowed in code mode: call host tools through `tools`")
    if event == "import" and args and isinstance(args[0], str):
        name: str = args[0]
        if any(name == root or name.startswith(root + ".") for root in _BLOCKED_IMPORTS):
            raise Blocked(f"importing {name} is not allowed in code mode")


def _strip_process_starts() -> None:
    """Keep `import subprocess` (and asyncio) working, without its unaudited fork_exec.

    Loaded before the audit hook, so later imports come from the cache; a fresh import of
    _posixsubprocess (after deleting it from sys.modules) is refused by the hook.
    """
    import _posixsubprocess
    import subprocess

    delattr(_posixsubprocess, "fork_exec")
    sys.modules["subprocess"] = subprocess  # it is there already; this keeps it loaded on purpose


def _limit(kind: int, value: int, slack: int = 0) -> None:
    soft = value
    hard = value + slack
    current_hard = resource.getrlimit(kind)[1]
    if current_hard != resource.RLIM_INFINITY:
        soft, hard = min(soft, current_hard), min(hard, current_hard)
    resource.setrlimit(kind, (soft, hard))


def _set_limits(limits: dict[str, int]) -> None:
    # soft < hard for CPU: SIGXCPU at the soft limit, SIGKILL a second later if it is ignored.
    _limit(resource.RLIMIT_CPU, limits["cpu_s"], slack=1)
    _limit(resource.RLIMIT_AS, limits["memory_mb"] * _MB)
    _limit(resource.RLIMIT_FSIZE, limits["file_mb"] * _MB)
    _limit(resource.RLIMIT_NOFILE, limits["open_files"])
    _limit(resource.RLIMIT_NPROC, limits["processes"])
    _limit(resource.RLIMIT_CORE, 0)


def _end(channel: _Channel, kind: str, message: str = "", trace: str = "") -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu_s = usage.ru_utime + usage.ru_stime
    channel.send({"end": kind, "message": message, "traceback": trace, "cpu_s": cpu_s})


def _trace(error: BaseException) -> str:
    """The traceback from the program's first frame on (the runner's own frames say nothing)."""
    frames = error.__traceback__
    while frames is not None and frames.tb_frame.f_code.co_filename != "<program>":
        frames = frames.tb_next
    return "".join(traceback.format_exception(type(error), error, frames or error.__traceback__))


def _run(channel: _Channel, setup: dict[str, Any]) -> None:
    code = compile(str(setup["program"]), "<program>", "exec")
    tools = Tools(channel, list(setup["tools"]))
    scope: dict[str, Any] = {"__name__": "__main__", "tools": tools, "ToolError": ToolError}
    try:
        exec(code, scope)
    except MemoryError:
        limit = setup["limits"]["memory_mb"]
        _end(channel, "memory", f"the program went over its memory limit ({limit} MB)")
    except Blocked as error:
        _end(channel, "blocked", str(error), _trace(error))
    except SystemExit as error:
        if error.code in (None, 0):
            _end(channel, "ok")
        else:
            _end(channel, "exit", f"the program exited: {error.code}")
    except BaseException as error:
        _end(channel, "error", f"{type(error).__name__}: {error}", _trace(error))
    else:
        _end(channel, "ok")


def main() -> None:
    # The protocol moves to fresh descriptors; fd 0 becomes /dev/null and fd 1 joins stderr, so
    # whatever the program prints (os.write(1, ...) included) is output, never a protocol line.
    reader = os.fdopen(os.dup(0), encoding="utf-8")
    writer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    sys.stdout = io.TextIOWrapper(
        io.FileIO(1, "w", closefd=False),
        encoding="utf-8",
        errors="backslashreplace",
        line_buffering=True,
    )
    channel = _Channel(reader, writer)
    setup = json.loads(reader.readline())
    _set_limits(setup["limits"])
    _strip_process_starts()
    sys.addaudithook(_audit)
    try:
        _run(channel, setup)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


if __name__ == "__main__":
    main()
