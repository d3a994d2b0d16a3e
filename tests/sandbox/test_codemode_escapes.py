"""Real escape attempts from a run_code program, per provider: each ends with a clear error."""

from __future__ import annotations

import socket

import pytest
from codemode_support import Market, code_rig, records, running
from sandbox_support import PROVIDERS, Machine

from starharness.runtime.codemode import CODE_DONE
from starharness.runtime.codemode.program import HOST_PACKAGE


def _untouched(machine: Machine, market: Market) -> None:
    assert sorted(p.name for p in machine.outside.iterdir()) == ["keep.txt"]
    assert (machine.outside / "keep.txt").read_text() == "untouched\n"
    assert sorted(p.name for p in machine.project.iterdir()) == []
    assert market.prices == {"ore": 10, "fuel": 20}


def _escapes(machine: Machine, port: int) -> dict[str, tuple[str, str, str]]:
    """name -> (program, failure code, text the error must contain)."""
    outside = machine.outside
    return {
        "write outside the tier": (
            f"open({str(outside / 'new.txt')!r}, 'w').write('pwned')",
            "code_error",
            str(outside / "new.txt"),
        ),
        "write the project at read-only": (
            f"open({str(machine.project / 'new.txt')!r}, 'w').write('pwned')",
            "code_error",
            "new.txt",
        ),
        "delete outside": (
            f"import os\nos.remove({str(outside / 'keep.txt')!r})",
            "code_error",
            "keep.txt",
        ),
        "read a key": (
            f"print(open({str(machine.home / '.ssh' / 'id_ed25519')!r}).read())",
            "code_error",
            "id_ed25519",
        ),
        "the harness's loopback port": (
            f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=3)",
            "code_error",
            "Error",
        ),
        "the internet": (
            "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=3)",
            "code_error",
            "Error",
        ),
        "fork bomb": ("import os\nwhile True:\n    os.fork()", "code_blocked", "os.fork"),
        "a process": (
            "import subprocess\nsubprocess.run(['touch', 'pwned'])",
            "code_blocked",
            "subprocess.Popen",
        ),
        "under subprocess": (
            "import sys\ndel sys.modules['_posixsubprocess']\nimport _posixsubprocess",
            "code_blocked",
            "importing _posixsubprocess",
        ),
        "native code": ("import ctypes", "code_blocked", "importing ctypes"),
        "while True": ("while True:\n    pass", "code_cpu", "CPU limit (2s)"),
        "while True, ignoring SIGXCPU": (
            "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass",
            "code_killed",
            "killed by signal 9",
        ),
        "a file over the size limit": (
            "import os, tempfile\n"
            "with open(os.path.join(tempfile.gettempdir(), 'big'), 'wb') as f:\n"
            "    f.write(b'x' * (20 * 1024 * 1024))",
            "code_error",
            "File too large",
        ),
        "10 GB": ("block = bytearray(10 * 1024**3)", "code_memory", "memory limit (512 MB)"),
        "import the host package": ("import starharness", "code_blocked", "starharness"),
        "import it from its folder": (
            f"import sys\nsys.path.insert(0, {str(HOST_PACKAGE.parent)!r})\n"
            "from starharness.runtime import tools",
            "code_blocked",
            "starharness",
        ),
        "read a file outside": (
            f"print(open({str(outside / 'keep.txt')!r}).read())",
            "code_error",
            "keep.txt",
        ),
        "list the home": (
            f"import os\nprint(os.listdir({str(machine.home)!r}))",
            "code_error",
            str(machine.home),
        ),
        "read the system's settings": ("print(open('/etc/passwd').read())", "code_error", "/etc"),
        "read the host's source": (
            f"print(open({str(HOST_PACKAGE / 'runtime' / 'errors.py')!r}).read())",
            "code_error",
            "errors.py",
        ),
    }


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_every_escape_attempt_ends_the_run_with_a_clear_error(
    machine: Machine, provider: str
) -> None:
    # A wall limit well past the CPU one: on a loaded machine `while True` must still meet its
    # CPU limit first.
    rig, market = await code_rig(machine.project, provider=provider, cpu_s=2, wall_s=60)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        try:
            for name, (program, code, text) in _escapes(machine, port).items():
                outcome = await rig.call("run_code", program=program)
                assert outcome.is_error, f"{name}: {outcome.content}"
                assert outcome.error_code == code, f"{name}: {outcome.content}"
                assert text in outcome.content, f"{name}: {outcome.content}"
                assert "PRIVATE KEY" not in outcome.content, name
                assert "untouched" not in outcome.content and "root:" not in outcome.content, name
                assert "StarHarnessError" not in outcome.content, name
                assert running(rig) == 0, name
                _untouched(machine, market)
                with pytest.raises(BlockingIOError):
                    server.accept()  # nothing from inside ever reached the harness's port
            # The host lives on: a plain program still runs.
            fine = await rig.call("run_code", program="print(tools.get_price(item='ore'))")
            assert not fine.is_error, fine.content
        finally:
            await rig.root.dispose()
    statuses = [done["status"] for done in records(market, CODE_DONE)]
    assert statuses[-1] == "ok" and "ok" not in statuses[:-1]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_program_that_sleeps_forever_meets_its_wall_limit(
    machine: Machine, provider: str
) -> None:
    rig, market = await code_rig(machine.project, provider=provider, wall_s=2)
    program = "import threading, time\nthreading.Thread(target=time.sleep, args=(3600,)).start()"
    try:
        for sleeper in ("import time\ntime.sleep(3600)", program):
            outcome = await rig.call("run_code", program=sleeper)
            assert outcome.is_error and outcome.error_code == "code_wall", outcome.content
            assert "stopped at its wall-clock limit (2s)" in outcome.content
            assert running(rig) == 0
            _untouched(machine, market)
    finally:
        await rig.root.dispose()
