"""A run_code program cannot start a process or load native code, by any path (issue 38).

Each trick runs through the real run_code path and a real sandbox. If it got through, it would
start `sh -c 'sleep 300; echo MARKER'`; the host's /proc is scanned for the marker afterwards.
The kernel layer (the runner's seccomp filter) is also tested alone, with the audit hook taken
out of the runner's text, so that only the kernel can say no.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import signal
import uuid
from pathlib import Path

import pytest
from codemode_support import Market, code_rig, running
from sandbox_support import PROVIDERS, Machine

from starharness.runtime.codemode import program as code_program

# A program's helpers: the real file of a standard extension module, and fork_exec called as
# subprocess.py (3.11) calls it, with a new session so the shell would outlive the run.
_PRELUDE = """
import _imp, importlib.machinery, importlib.util, os, sys, tempfile
SHELL = ["/bin/sh", "-c", "sleep 300; echo {marker}"]

def extension(name):
    return importlib.machinery.PathFinder.find_spec(name).origin

def spawn(fork_exec):
    errors, errors_w = os.pipe()
    return fork_exec(
        SHELL, (b"/bin/sh",), True, (errors_w,), None, None, -1, -1, -1, -1, -1, -1,
        errors, errors_w, True, True, -1, None, None, None, -1, None, False,
    )
"""

_TRICKS = {
    "_imp.create_dynamic, a dotted name for _posixsubprocess": (
        "spec = importlib.machinery.ModuleSpec("
        "'x._posixsubprocess', None, origin=extension('_posixsubprocess'))\n"
        "spawn(_imp.create_dynamic(spec).fork_exec)",
        "importing x._posixsubprocess is not allowed",
    ),
    "_imp.create_dynamic, a dotted name for _ctypes": (
        "spec = importlib.machinery.ModuleSpec('x._ctypes', None, origin=extension('_ctypes'))\n"
        "sys.modules['_ctypes'] = _imp.create_dynamic(spec)\n"
        "import ctypes\n"
        "libc = ctypes.CDLL(None)\n"
        "if libc.fork() == 0:\n"
        "    argv = (ctypes.c_char_p * 4)(*[a.encode() for a in SHELL], None)\n"
        "    libc.execv(b'/bin/sh', argv)",
        "importing x._ctypes is not allowed",
    ),
    "importlib.machinery.ExtensionFileLoader on the real file": (
        "loader = importlib.machinery.ExtensionFileLoader("
        "'x._posixsubprocess', extension('_posixsubprocess'))\n"
        "spec = importlib.util.spec_from_loader('x._posixsubprocess', loader)\n"
        "spawn(importlib.util.module_from_spec(spec).fork_exec)",
        "importing x._posixsubprocess is not allowed",
    ),
    "importlib.util.spec_from_file_location on the real file": (
        "spec = importlib.util.spec_from_file_location("
        "'x._posixsubprocess', extension('_posixsubprocess'))\n"
        "spawn(importlib.util.module_from_spec(spec).fork_exec)",
        "importing x._posixsubprocess is not allowed",
    ),
    "an extension's file under a name of its own": (
        "spec = importlib.util.spec_from_file_location('x.y', extension('_posixsubprocess'))\n"
        "spawn(importlib.util.module_from_spec(spec).fork_exec)",
        "loading native code from",
    ),
    # ctypes's own source copied as the package `kt`, its extension a link inside it.
    "ctypes under another name": (
        "package = os.path.join(tempfile.gettempdir(), 'kt')\n"
        "os.mkdir(package)\n"
        "source = os.path.dirname(importlib.util.find_spec('ctypes').origin)\n"
        "for name in ('__init__.py', '_endian.py'):\n"
        "    text = open(os.path.join(source, name)).read()\n"
        "    text = text.replace('from _ctypes ', 'from kt._ctypes ')\n"
        "    text = text.replace('from ctypes', 'from kt')\n"
        "    open(os.path.join(package, name), 'w').write(text)\n"
        "real = extension('_ctypes')\n"
        "os.symlink(real, os.path.join(package, os.path.basename(real)))\n"
        "sys.path.insert(0, tempfile.gettempdir())\n"
        "import kt\n"
        "libc = kt.CDLL(None)\n"
        "if libc.fork() == 0:\n"
        "    argv = (kt.c_char_p * 4)(*[a.encode() for a in SHELL], None)\n"
        "    libc.execv(b'/bin/sh', argv)",
        "importing kt._ctypes is not allowed",
    ),
    # The audit hook itself: the runner's module is the program's __main__, reachable.
    "the runner's globals emptied": (
        "runner = vars(sys.modules['__main__'])\n"
        "for name in [n for n in runner if n.startswith('_BLOCKED')]:\n"
        "    runner[name] = type(runner[name])()\n"
        "if os.fork() == 0:\n"
        "    os.execv('/bin/sh', SHELL)",
        "os.fork is not allowed",
    ),
    "the hook's checks replaced": (
        "import gc\n"
        "hook = [f for f in gc.get_objects() if getattr(f, '__name__', '') == 'audit'][0]\n"
        "hook.__defaults__ = (frozenset(),) * len(hook.__defaults__)\n"
        "if os.fork() == 0:\n"
        "    os.execv('/bin/sh', SHELL)",
        "changing the audit hook's __defaults__ is not allowed",
    ),
    "os.posix_spawn": ("os.posix_spawn('/bin/sh', SHELL, os.environ)", "os.posix_spawn"),
    "os.fork": ("if os.fork() == 0:\n    os.execv('/bin/sh', SHELL)", "os.fork"),
    "os.execv": ("os.execv('/bin/sh', SHELL)", "os.exec"),
    "subprocess.run": (
        "import subprocess\nsubprocess.run(SHELL, start_new_session=True)",
        "subprocess.Popen",
    ),
}


def _marked(marker: str) -> list[int]:
    """The host's processes whose command line holds `marker` (bubblewrap's are among them)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def _end(pids: list[int]) -> None:
    """Kill what an escape left behind, so a failing test does not leave it running."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _untouched(machine: Machine, market: Market) -> None:
    assert sorted(p.name for p in machine.outside.iterdir()) == ["keep.txt"]
    assert sorted(p.name for p in machine.project.iterdir()) == []
    assert market.prices == {"ore": 10, "fuel": 20}


@pytest.mark.parametrize("trick", list(_TRICKS))
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_process_or_native_code_is_blocked(
    machine: Machine, provider: str, trick: str
) -> None:
    marker = f"escape-{uuid.uuid4().hex}"
    program, text = _TRICKS[trick]
    rig, market = await code_rig(machine.project, provider=provider, wall_s=20)
    try:
        outcome = await rig.call("run_code", program=_PRELUDE.replace("{marker}", marker) + program)
        assert outcome.is_error and outcome.error_code == "code_blocked", outcome.content
        assert text in outcome.content, outcome.content
        assert running(rig) == 0
        _untouched(machine, market)
        # The host lives on: a plain program still runs, threads and subprocess's import too.
        fine = await rig.call(
            "run_code",
            program="import subprocess, threading\n"
            "t = threading.Thread(target=print, args=(tools.get_price(item='ore'),))\n"
            "t.start()\nt.join()",
        )
        assert not fine.is_error, fine.content
        assert "'price': 10" in fine.content
    finally:
        await rig.root.dispose()
        left = _marked(marker)
        _end(left)
    assert left == [], f"processes outlived the run: {left}"


_KERNEL_ONLY = """
import ctypes, errno, threading

def attempt(name, call):
    try:
        call()
    except OSError as error:
        print(name, errno.errorcode.get(error.errno, error.errno))
    except ImportError as error:
        print(name, "ImportError", error)
    else:
        print(name, "ran")

def fork():
    if os.fork() == 0:
        os.execv("/bin/sh", SHELL)

attempt("os.fork", fork)
attempt("os.execv", lambda: os.execv("/bin/sh", SHELL))
attempt("os.posix_spawn", lambda: os.posix_spawn("/bin/sh", SHELL, os.environ))
spec = importlib.machinery.ModuleSpec(
    "x._posixsubprocess", None, origin=extension("_posixsubprocess"))
attempt("fork_exec", lambda: spawn(_imp.create_dynamic(spec).fork_exec))
attempt("import mmap", lambda: __import__("mmap"))
thread = threading.Thread(target=print, args=("a thread", "ran"))
thread.start()
thread.join()

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]

def syscall(name, number, *args):
    result = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(a) for a in args])
    print(name, "ran" if result >= 0 else errno.errorcode[ctypes.get_errno()])
    if result == 0:
        os._exit(0)  # a child (it would be a bug): gone at once

syscall("fork", 57)
syscall("vfork", 58)
syscall("clone", 56, 17, 0, 0, 0, 0)  # SIGCHLD: a fork
syscall("clone3", 435, 0, 0)
argv = (ctypes.c_char_p * 4)(*[a.encode() for a in SHELL], None)
shell = ctypes.create_string_buffer(b"/bin/sh")
syscall("execve", 59, ctypes.addressof(shell), ctypes.addressof(argv), 0)
anonymous = 0x2 | 0x20  # MAP_PRIVATE | MAP_ANONYMOUS
executable = libc.mmap(None, 4096, 0x1 | 0x4, anonymous, -1, 0)
print("mmap PROT_EXEC", errno.errorcode[ctypes.get_errno()] if executable == 2**64 - 1 else "ran")
page = libc.mmap(None, 4096, 0x1 | 0x2, anonymous, -1, 0)
failed = libc.mprotect(ctypes.c_void_p(page), 4096, 0x1 | 0x4)
print("mprotect PROT_EXEC", errno.errorcode[ctypes.get_errno()] if failed else "ran")
"""

_KERNEL_SAYS = [
    "os.fork EPERM",
    "os.execv EPERM",
    "os.posix_spawn EPERM",
    "fork_exec EPERM",
    "a thread ran",
    "fork EPERM",
    "vfork EPERM",
    "clone EPERM",
    "clone3 ENOSYS",
    "execve EPERM",
    "mmap PROT_EXEC EPERM",
    "mprotect PROT_EXEC EPERM",
]

_HOOK = "sys.addaudithook(_audit_hook(native))"


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the raw calls use x86_64 numbers")
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_kernel_filter_alone_stops_processes_and_new_native_code(
    machine: Machine, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The runner without its audit hook: ctypes, os.fork and the rest reach the kernel.
    assert code_program.GUEST_SOURCE.count(_HOOK) == 1
    monkeypatch.setattr(
        code_program, "GUEST_SOURCE", code_program.GUEST_SOURCE.replace(_HOOK, "pass")
    )
    marker = f"kernel-{uuid.uuid4().hex}"
    rig, market = await code_rig(machine.project, provider=provider, wall_s=20)
    try:
        outcome = await rig.call(
            "run_code", program=_PRELUDE.replace("{marker}", marker) + _KERNEL_ONLY
        )
        assert running(rig) == 0
    finally:
        await rig.root.dispose()
        left = _marked(marker)
        _end(left)
    assert not outcome.is_error, outcome.content
    output = json.loads(outcome.content)["output"]
    said = [line for line in output.splitlines() if not line.startswith("import mmap")]
    for line in _KERNEL_SAYS:
        assert line in said, f"{line!r} not in:\n{output}"
    # A native module not mapped before the filter cannot be mapped now.
    assert "import mmap ImportError" in output and "failed to map segment" in output, output
    assert left == [], f"processes outlived the run: {left}"
    _untouched(machine, market)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_without_the_filter_the_program_is_not_run(
    machine: Machine, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As on a machine the filter has no table for: the runner refuses before the program.
    install = "seccomp_program(os.uname().machine)"
    assert code_program.GUEST_SOURCE.count(install) == 1
    monkeypatch.setattr(
        code_program,
        "GUEST_SOURCE",
        code_program.GUEST_SOURCE.replace(install, "seccomp_program('pdp11')"),
    )
    rig, market = await code_rig(machine.project, provider=provider)
    try:
        outcome = await rig.call(
            "run_code", program="tools.set_price(item='ore', price=1)\nprint('it ran')"
        )
    finally:
        await rig.root.dispose()
    assert outcome.is_error and outcome.error_code == "code_unconfined", outcome.content
    assert (
        "the program was not run: code mode's system call filter could not be set "
        "(no system call table for the machine 'pdp11') [unconfined]"
    ) in outcome.content
    assert "it ran" not in outcome.content
    _untouched(machine, market)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_program_cannot_write_its_own_memory_through_proc(
    machine: Machine, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # /proc/self/mem would let a program overwrite its own mapped code: native code without
    # loading any. Tried with the audit hook removed, so the sandbox alone must refuse it.
    assert code_program.GUEST_SOURCE.count(_HOOK) == 1
    monkeypatch.setattr(
        code_program, "GUEST_SOURCE", code_program.GUEST_SOURCE.replace(_HOOK, "pass")
    )
    rig, _market = await code_rig(machine.project, provider=provider, wall_s=20)
    try:
        outcome = await rig.call(
            "run_code",
            program="try:\n    open('/proc/self/mem', 'r+b')\n    print('opened')\n"
            "except OSError as error:\n    print('refused', type(error).__name__)",
        )
    finally:
        await rig.root.dispose()
    assert not outcome.is_error, outcome.content
    assert "refused" in json.loads(outcome.content)["output"], outcome.content
