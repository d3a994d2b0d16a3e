"""Code mode's seccomp program, run by a small BPF interpreter for each machine it knows.

The real filter is tested through the kernel in test_codemode_processes.py (x86_64 only here);
this checks the program's logic for aarch64 as well, and for any call number and arguments.
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from starharness.runtime.codemode.guest import Unconfined, seccomp_program

ALLOW = 0x7FFF0000
EPERM = 0x00050000 | 1
ENOSYS = 0x00050000 | 38
KILL = 0x80000000

ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
CLONE = {"x86_64": 56, "aarch64": 220}
MAPS = {"x86_64": (9, 10, 329), "aarch64": (222, 226, 288)}
EXEC = {"x86_64": (59, 322), "aarch64": (221, 281)}
# Everything the filter looks at on a machine; other numbers must pass whatever their arguments.
CHECKED = {
    "x86_64": {56, 435, 9, 10, 329, 57, 58, 59, 322, 101, 310, 311, 135, 154, 30, 272, 308}
    | {425, 426, 427, 323, 321, 298, 246, 320, 175, 313, 165, 438},
    "aarch64": {220, 435, 222, 226, 288, 221, 281, 117, 270, 271, 92, 196, 97, 268}
    | {425, 426, 427, 282, 280, 241, 104, 294, 105, 273, 40, 438},
}
THREAD = 0x3D0F00  # what glibc's pthread_create passes (CLONE_VM ... CLONE_THREAD ...)
FORK = 0x01200011  # glibc's fork: CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD


def run(program: bytes, arch: int, nr: int, args: tuple[int, ...] = ()) -> int:
    """What the filter returns for one call (seccomp_data: nr, arch, ip, six arguments)."""
    full = (*args, *([0] * (6 - len(args))))
    data = struct.pack("=iIQ6Q", nr, arch, 0, *full)
    insns = [struct.unpack_from("=HBBI", program, at) for at in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        op, jt, jf, k = insns[pc]
        if op == 0x20:  # ld word at k
            acc = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif op == 0x06:
            return k
        else:
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[op]
            pc += 1 + (jt if taken else jf)
        assert pc < len(insns), "a jump past the end"


@pytest.mark.parametrize("machine", sorted(ARCH))
def test_processes_and_executable_memory_are_refused_and_threads_pass(machine: str) -> None:
    program = seccomp_program(machine)
    arch = ARCH[machine]
    assert run(program, arch, CLONE[machine], (THREAD,)) == ALLOW
    assert run(program, arch, CLONE[machine], (FORK,)) == EPERM
    assert run(program, arch, CLONE[machine], (THREAD | 0x10000000,)) == EPERM  # NEWUSER
    assert run(program, arch, 435) == ENOSYS  # clone3: libc falls back to clone
    for nr in EXEC[machine]:
        assert run(program, arch, nr) == EPERM
    for nr in MAPS[machine]:
        assert run(program, arch, nr, (0, 4096, 0x1 | 0x2)) == ALLOW
        assert run(program, arch, nr, (0, 4096, 0x1 | 0x4)) == EPERM
        assert run(program, arch, nr, (0, 4096, 0x4, 0x22, 2**64 - 1)) == EPERM
    assert run(program, 0x40000003, 2) == KILL  # i386 (AUDIT_ARCH_I386): another ABI
    assert run(program, 0x40000028, 2) == KILL  # ARM (32-bit compat)


def test_x86_64_fork_vfork_and_x32_calls_are_refused() -> None:
    program = seccomp_program("x86_64")
    for nr in (57, 58, 0x40000000 | 0, 0x40000000 | 57):
        assert run(program, ARCH["x86_64"], nr) == EPERM


@given(
    st.sampled_from(sorted(ARCH)),
    st.integers(0, 1023),
    st.lists(st.integers(0, 2**64 - 1), min_size=6, max_size=6),
)
def test_every_other_call_passes_whatever_its_arguments(
    machine: str, nr: int, args: list[int]
) -> None:
    if nr in CHECKED[machine]:
        return
    assert run(seccomp_program(machine), ARCH[machine], nr, tuple(args)) == ALLOW


def test_an_unknown_machine_has_no_filter() -> None:
    with pytest.raises(Unconfined, match="no system call table for the machine 'pdp11'"):
        seccomp_program("pdp11")
