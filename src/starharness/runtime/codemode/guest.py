"""The code-mode runner: runs inside the sandbox as `python -I -S -B -c <this file's text>`.

It imports only the standard library (the host package is neither on its path nor readable).
The host sends one JSON line on stdin: {"program", "tools", "limits"}. The runner sets the
limits, then runs the program with `tools` in its globals; each `tools.NAME(**args)` is one JSON
line to the host and one answer back. The program's own output (print, stdout, stderr) goes to
stderr, which the host keeps apart from the protocol. The last line says how the program ended.

Before the program's first line the runner confines itself in two layers. The wall is a seccomp
filter (the kernel's, below Python's import machinery): no new process (fork, vfork, clone
without CLONE_THREAD, execve), no new executable memory (so no native library can be loaded
after it), no ptrace. It is installed with ctypes, which the program then cannot import. The
second layer is an audit hook, which refuses the same things earlier with a clear error.
"""

from __future__ import annotations

import io
import json
import os
import resource
import struct
import sys
import traceback
from collections.abc import Callable
from typing import Any, NamedTuple, TextIO

_MB = 1024 * 1024

# Audit events that start a process: the program calls the host through `tools`, never another
# program. The seccomp filter is the wall; this names the refusal before the kernel does.
_BLOCKED_EVENTS = frozenset(
    {
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.exec",
        "os.spawn",
        "os.system",
        "os.startfile",
        "subprocess.Popen",
        "pty.spawn",
    }
)
# Modules refused under any name (each part of a dotted name is checked, so `x._ctypes` too):
# native code would step around the hook, a fresh _posixsubprocess has fork_exec, and the
# host's package is not the program's API.
_BLOCKED_MODULES = frozenset({"ctypes", "_ctypes", "_posixsubprocess", "starharness"})
# Changing these would change the audit hook itself (its checks live in its defaults).
_FUNCTION_INTERNALS = frozenset({"__code__", "__defaults__", "__kwdefaults__"})

# The standard library's native modules a program may import: mapped before the filter forbids
# new executable memory (an import then finds them loaded). Not ctypes or _posixsubprocess, no
# test, terminal, shared-memory or TLS module (the network is off anyway).
_NATIVE_MODULES = frozenset(
    {
        "_asyncio", "_bisect", "_blake2", "_bz2", "_codecs_cn", "_codecs_hk",
        "_codecs_iso2022", "_codecs_jp", "_codecs_kr", "_codecs_tw", "_contextvars", "_csv",
        "_datetime", "_decimal", "_elementtree", "_heapq", "_json", "_lzma", "_md5",
        "_multibytecodec", "_opcode", "_pickle", "_queue", "_random", "_sha1", "_sha2",
        "_sha256", "_sha3", "_sha512", "_socket", "_sqlite3", "_statistics", "_struct",
        "_typing", "_uuid", "_zoneinfo", "array", "binascii", "cmath", "fcntl", "grp", "math",
        "pyexpat", "resource", "select", "unicodedata", "zlib",
    }
)  # fmt: skip


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


class _Native(NamedTuple):
    """The native modules loaded before the filter: (file, module name) pairs and folders."""

    files: frozenset[tuple[str, str]]
    folders: frozenset[str]


def _audit_hook(native: _Native) -> Callable[[str, tuple[Any, ...]], None]:
    """The audit hook: everything it reads is bound in its defaults, never looked up later.

    The program can reach the runner's globals (through frames) and builtins; rebinding them
    changes nothing here, and changing the defaults or the code is itself refused.
    """

    def audit(
        event: str,
        args: tuple[Any, ...],
        _events: frozenset[str] = _BLOCKED_EVENTS,
        _modules: frozenset[str] = _BLOCKED_MODULES,
        _internals: frozenset[str] = _FUNCTION_INTERNALS,
        _files: frozenset[tuple[str, str]] = native.files,
        _folders: frozenset[str] = native.folders,
        _str: type[str] = str,
        _type: type[type] = type,
        _len: Callable[[Any], int] = len,
        _blocked: type[Exception] = Blocked,
        _unavailable: type[Exception] = ImportError,
        _self: object = None,
    ) -> None:
        if event in _events:
            raise _blocked(f"{event} is not allowed in code mode: call host tools through `tools`")
        if event.startswith("ctypes."):
            raise _blocked(f"{event} is not allowed in code mode: it runs native code")
        if event == "object.__setattr__":
            if _len(args) > 1 and args[0] is _self and args[1] in _internals:
                raise _blocked(f"changing the audit hook's {args[1]} is not allowed in code mode")
            return
        if event != "import":
            return
        name: Any = args[0] if args else None  # checked to be a str before use
        if _type(name) is not _str:
            raise _blocked("importing a module without a plain name is not allowed in code mode")
        for part in name.split("."):
            if part in _modules:
                raise _blocked(f"importing {name} is not allowed in code mode")
        path: Any = args[1] if _len(args) > 1 else None
        if path is None:
            return  # an import statement: the file is not known yet
        # _imp.create_dynamic (every extension module's loader) is about to dlopen `path`.
        if _type(path) is not _str:
            raise _blocked(f"loading native code for {name} is not allowed in code mode")
        last = name.rpartition(".")[2]
        if (path, last) in _files:
            return
        folder, _, file = path.rpartition("/")
        if folder in _folders and file.partition(".")[0] == last:
            # A standard module not loaded at the start: an ImportError, so that optional
            # imports (`try: import _ssl`) go on without it.
            raise _unavailable(f"the native module {name} is not available in code mode")
        raise _blocked(f"loading native code from {path} is not allowed in code mode")

    defaults = audit.__defaults__ or ()
    audit.__defaults__ = (*defaults[:-1], audit)  # `_self`, before the hook watches it
    return audit


def _strip_process_starts() -> None:
    """Keep `import subprocess` (and asyncio) working, without its unaudited fork_exec.

    Loaded before the audit hook, so later imports come from the cache; a fresh import of
    _posixsubprocess (after deleting it from sys.modules) is refused by the hook.
    """
    import _posixsubprocess
    import subprocess

    delattr(_posixsubprocess, "fork_exec")
    sys.modules["subprocess"] = subprocess  # it is there already; this keeps it loaded on purpose


class Unconfined(Exception):
    """The kernel filter could not be installed: the program must not run."""


class _Syscalls(NamedTuple):
    """One machine's audit architecture and the system call numbers the filter checks."""

    arch: int
    x32: bool
    """Whether the x32 ABI shares the architecture (its numbers have bit 30 set)."""
    clone: int
    clone3: int
    maps: tuple[int, ...]
    """mmap, mprotect, pkey_mprotect: refused with PROT_EXEC."""
    denied: tuple[int, ...]


_SYSCALLS = {
    "x86_64": _Syscalls(
        arch=0xC000003E,  # AUDIT_ARCH_X86_64
        x32=True,
        clone=56,
        clone3=435,
        maps=(9, 10, 329),
        # fork, vfork, execve, execveat; ptrace, process_vm_readv/writev; personality
        # (READ_IMPLIES_EXEC), modify_ldt, shmat (SHM_EXEC); unshare, setns; io_uring_*
        # (its requests pass the filter unchecked); userfaultfd, bpf, perf_event_open,
        # kexec_load, kexec_file_load, init_module, finit_module, mount, pidfd_getfd.
        denied=(57, 58, 59, 322, 101, 310, 311, 135, 154, 30, 272, 308, 425, 426, 427,
                323, 321, 298, 246, 320, 175, 313, 165, 438),
    ),
    "aarch64": _Syscalls(
        arch=0xC00000B7,  # AUDIT_ARCH_AARCH64 (no fork, vfork or modify_ldt there)
        x32=False,
        clone=220,
        clone3=435,
        maps=(222, 226, 288),
        denied=(221, 281, 117, 270, 271, 92, 196, 97, 268, 425, 426, 427,
                282, 280, 241, 104, 294, 105, 273, 40, 438),
    ),
}  # fmt: skip

_CLONE_THREAD = 0x00010000
# CLONE_NEWTIME, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET.
_CLONE_NEW_NAMESPACES = 0x00000080 | 0x00020000 | 0x7E000000
_PROT_EXEC = 0x4
_EPERM = 1
_ENOSYS = 38
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_RET_ALLOW = 0x7FFF0000
# BPF opcodes: load a word of seccomp_data, compare, test bits, return.
_LD, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_NR, _ARCH, _ARG0, _ARG2 = 0, 4, 16, 32  # offsets in seccomp_data (low half of an arg)


def seccomp_program(machine: str) -> bytes:
    """The filter for `machine`: EPERM for new processes, executable memory and the rest of
    `denied`; ENOSYS for clone3 (libc then uses clone, whose flags a filter can read); other
    architectures (32-bit calls) kill the process."""
    table = _SYSCALLS.get(machine)
    if table is None:
        raise Unconfined(f"no system call table for the machine {machine!r}")
    # (opcode, jump if true, jump if false, operand); jumps name a label or 0 (the next one).
    code: list[tuple[int, int | str, int | str, int]] = [
        (_LD, 0, 0, _ARCH),
        (_JEQ, 0, "kill", table.arch),
        (_LD, 0, 0, _NR),
    ]
    if table.x32:
        code.append((_JGE, "deny", 0, 0x40000000))
    code += [(_JEQ, "clone", 0, table.clone), (_JEQ, "nosys", 0, table.clone3)]
    code += [(_JEQ, "maps", 0, number) for number in table.maps]
    code += [(_JEQ, "deny", 0, number) for number in table.denied]
    code.append((_RET, 0, 0, _RET_ALLOW))
    labels = {"clone": len(code)}
    code += [
        (_LD, 0, 0, _ARG0),  # clone's flags: a thread of this process, in its namespaces
        (_JSET, 0, "deny", _CLONE_THREAD),
        (_JSET, "deny", "allow", _CLONE_NEW_NAMESPACES),
    ]
    labels["maps"] = len(code)
    code += [(_LD, 0, 0, _ARG2), (_JSET, "deny", "allow", _PROT_EXEC)]
    for label, action in (
        ("allow", _RET_ALLOW),
        ("deny", _RET_ERRNO | _EPERM),
        ("nosys", _RET_ERRNO | _ENOSYS),
        ("kill", _RET_KILL_PROCESS),
    ):
        labels[label] = len(code)
        code.append((_RET, 0, 0, action))

    def offset(at: int, target: int | str) -> int:
        return target if isinstance(target, int) else labels[target] - at - 1

    return b"".join(
        struct.pack("=HBBI", op, offset(at, jt), offset(at, jf), k)
        for at, (op, jt, jf, k) in enumerate(code)
    )


_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


def _confine() -> _Native:
    """Map the allowed native modules, then install the filter; Unconfined if it cannot be.

    ctypes is imported here only, before the audit hook, and dropped from sys.modules after,
    so the program's `import ctypes` is a fresh import the hook refuses.
    """
    if not sys.platform.startswith("linux") or struct.calcsize("P") != 8:
        bits = struct.calcsize("P") * 8
        raise Unconfined(
            f"it needs Linux's seccomp and a 64-bit interpreter: {sys.platform}, {bits}-bit"
        )
    program = seccomp_program(os.uname().machine)
    import ctypes

    try:
        native = _load_native(ctypes.CDLL)
        libc = ctypes.CDLL(None, use_errno=True)
        one, zero = ctypes.c_ulong(1), ctypes.c_ulong(0)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, one, zero, zero, zero) != 0:
            raise Unconfined(f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
        filters = ctypes.create_string_buffer(program, len(program))
        fprog = struct.pack("=HxxxxxxQ", len(program) // 8, ctypes.addressof(filters))
        prog = ctypes.create_string_buffer(fprog, len(fprog))
        mode = ctypes.c_ulong(_SECCOMP_MODE_FILTER)
        if libc.prctl(_PR_SET_SECCOMP, mode, prog, zero, zero) != 0:
            raise Unconfined(f"prctl(PR_SET_SECCOMP): {os.strerror(ctypes.get_errno())}")
    finally:
        for name in [n for n in sys.modules if n.partition(".")[0] in ("ctypes", "_ctypes")]:
            del sys.modules[name]
    return native


def _load_native(load: Callable[[str], object]) -> _Native:
    """dlopen the allowed native modules at the paths the import system will ask for."""
    from importlib.machinery import EXTENSION_SUFFIXES

    suffixes = tuple(EXTENSION_SUFFIXES)
    files: set[tuple[str, str]] = set()
    folders: set[str] = set()
    for folder in sys.path:
        try:
            names = os.listdir(folder)  # noqa: PTH208 (pathlib would cost start-up time)
        except OSError:
            continue
        for name in names:
            module = name.partition(".")[0]
            if module in _NATIVE_MODULES and name.endswith(suffixes):
                folders.add(folder.rstrip("/"))
                path = f"{folder.rstrip('/')}/{name}"
                try:
                    load(path)
                except OSError:
                    continue  # a library it needs is missing: importing it fails as it would
                files.add((path, module))
    return _Native(frozenset(files), frozenset(folders))


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
    try:
        native = _confine()
    except Unconfined as error:
        _end(channel, "unconfined", f"code mode's system call filter could not be set ({error})")
        return
    sys.addaudithook(_audit_hook(native))
    try:
        _run(channel, setup)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()


if __name__ == "__main__":
    main()
