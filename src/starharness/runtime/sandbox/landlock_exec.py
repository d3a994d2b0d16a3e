"""Self-confining launcher: apply Landlock and a socket filter to this process, then exec.

Run as `python -I -S landlock_exec.py [--full] [--network] [--read PATH]... [--write PATH]...
[--list PATH]... -- ARGV...`. It imports only the standard library (and not even json or re:
each import costs start-up time on every command), so it starts fast and needs no installed
package. The rules survive `execve`, so the command and everything it starts stay confined.
Exit status 125 with a `sandbox setup failed:` line means the command never ran.

The launcher stays as the command's supervisor, as bubblewrap's init does: it forks, the child
confines itself and execs the command, and the parent (a child subreaper, so every orphan of
the command is reparented to it rather than escaping to PID 1) waits. When the command's first
process ends, or the launcher's own parent does (PR_SET_PDEATHSIG), it kills everything the
command left, `setsid` children included, and exits with the command's status (128+N for a
signal, as bubblewrap reports it).
"""

from __future__ import annotations

import _signal  # pyright: ignore[reportMissingImports] - not `signal`: its enum costs 10-20 ms a start
import ctypes
import os
import stat
import struct
import sys

SETUP_FAILED_STATUS = 125
SETUP_FAILED_PREFIX = "sandbox setup failed: "

_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

# Filesystem rights by the ABI version that introduced them.
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2: links and renames across folders
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

READ_ACCESS = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
ABI1_ACCESS = (
    FS_EXECUTE
    | FS_WRITE_FILE
    | FS_READ_FILE
    | FS_READ_DIR
    | FS_REMOVE_DIR
    | FS_REMOVE_FILE
    | FS_MAKE_CHAR
    | FS_MAKE_DIR
    | FS_MAKE_REG
    | FS_MAKE_SOCK
    | FS_MAKE_FIFO
    | FS_MAKE_BLOCK
    | FS_MAKE_SYM
)
"""Every filesystem right of ABI 1, the first 13 bits."""
FILE_ONLY_ACCESS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV

_SIGKILL = 9
_SIGTERM = 15
_SIGSTOP = 19  # x86_64 and aarch64 alike
_SIG_DFL = 0
_SIG_IGN = 1
_set_handler = _signal.signal  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAPABILITY_VERSION_3 = 0x20080522
_EINVAL = 22
_SECCOMP_MODE_FILTER = 2

# (audit arch, socket syscall number) per machine; io_uring_setup is 425 on both.
_ARCHES = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}
_SYS_IO_URING_SETUP = 425
_AF_UNIX = 1
_EPERM = 1

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.prctl.restype = ctypes.c_int


class SetupError(Exception):
    """Confinement could not be applied; the command must not run."""


def _errno_text(what: str) -> SetupError:
    err = ctypes.get_errno()
    return SetupError(f"{what}: {os.strerror(err)} (errno {err})")


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled."""
    result = _libc.syscall(
        _SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
    )
    return int(result) if result > 0 else 0


def fs_access_for(abi: int) -> int:
    """Every filesystem right the kernel of `abi` can handle."""
    access = ABI1_ACCESS
    if abi >= 2:
        access |= FS_REFER
    if abi >= 3:
        access |= FS_TRUNCATE
    if abi >= 5:
        access |= FS_IOCTL_DEV
    return access


def ruleset_attr(abi: int, *, handle_fs: bool, handle_net: bool) -> bytes:
    """`struct landlock_ruleset_attr`, as long as this ABI knows it."""
    fs = fs_access_for(abi) if handle_fs else 0
    net = NET_BIND_TCP | NET_CONNECT_TCP if handle_net and abi >= 4 else 0
    if abi >= 6:
        return struct.pack("=QQQ", fs, net, SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
    if abi >= 4:
        return struct.pack("=QQ", fs, net)
    return struct.pack("=Q", fs)


def _add_path_rule(ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path that does not exist grants nothing
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            access &= FILE_ONLY_ACCESS
        if access == 0:
            return
        # struct landlock_path_beneath_attr is packed: u64 allowed_access, s32 parent_fd.
        attr = ctypes.create_string_buffer(struct.pack("=Qi", access, fd))
        if _libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, attr, 0) != 0:
            raise _errno_text(f"landlock_add_rule({path})")
    finally:
        os.close(fd)


def drop_capabilities() -> None:
    """Give up every capability for good: bounding set, ambient set, and the current sets.

    Without this a command run as root keeps CAP_SYS_PTRACE and CAP_DAC_OVERRIDE, and could
    read the harness's own /proc/PID/environ (its API keys) in spite of Landlock.
    """
    for cap in range(64):
        if _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            if err == _EINVAL:
                break  # past the last capability this kernel knows
            if err != _EPERM:
                raise _errno_text(f"prctl(PR_CAPBSET_DROP, {cap})")
            # EPERM: no CAP_SETPCAP, i.e. an unprivileged user whose sets are cleared below.
    _libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = ctypes.create_string_buffer(struct.pack("=Ii", _CAPABILITY_VERSION_3, 0))
    data = ctypes.create_string_buffer(bytes(24))  # two zeroed {effective, permitted, inheritable}
    if _libc.capset(header, data) != 0:
        raise _errno_text("capset")


def seccomp_program(machine: str) -> bytes:
    """A BPF filter refusing socket() for every family but AF_UNIX, and io_uring_setup."""
    if machine not in _ARCHES:
        raise SetupError(f"no socket filter for the machine {machine!r}")
    arch, socket_nr = _ARCHES[machine]
    deny = 0x00050000 | _EPERM  # SECCOMP_RET_ERRNO
    allow = 0x7FFF0000
    kill = 0x80000000
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    program = [
        (ld, 0, 0, 4),  # 0: seccomp_data.arch
        (jeq, 1, 0, arch),  # 1: our arch -> 3
        (ret, 0, 0, kill),  # 2: another ABI (e.g. 32-bit calls) is not allowed at all
        (ld, 0, 0, 0),  # 3: seccomp_data.nr
        (jge, 5, 0, 0x40000000),  # 4: x32 numbers -> 10 (deny)
        (jeq, 4, 0, _SYS_IO_URING_SETUP),  # 5: -> 10 (deny)
        (jeq, 0, 2, socket_nr),  # 6: socket -> 7, else -> 9 (allow)
        (ld, 0, 0, 16),  # 7: low half of args[0], the address family
        (jeq, 0, 1, _AF_UNIX),  # 8: AF_UNIX -> 9, else -> 10
        (ret, 0, 0, allow),  # 9
        (ret, 0, 0, deny),  # 10
    ]
    return b"".join(struct.pack("=HBBI", *insn) for insn in program)


def _install_seccomp(program: bytes) -> None:
    count = len(program) // 8
    filters = ctypes.create_string_buffer(program, len(program))
    fprog = struct.pack("=HxxxxxxQ", count, ctypes.addressof(filters))
    prog = ctypes.create_string_buffer(fprog, len(fprog))
    if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, prog, 0, 0) != 0:
        raise _errno_text("prctl(PR_SET_SECCOMP)")


class Rules:
    """What the command may touch: paths to read, paths to write, network, or no file rules.

    A plain class: `dataclasses` would import `inspect` and `re`, 20+ ms on every command.
    """

    __slots__ = ("full", "list", "network", "read", "write")

    def __init__(
        self,
        read: list[str] | tuple[str, ...] = (),
        write: list[str] | tuple[str, ...] = (),
        network: bool = False,
        full: bool = False,
        list: list[str] | tuple[str, ...] = (),
    ) -> None:
        self.read = [*read]
        self.write = [*write]
        self.network = network
        self.full = full
        self.list = [*list]
        """Folders whose entries may be listed (not read): the parents of hidden paths."""

    def _key(self) -> tuple[object, ...]:
        return (self.read, self.write, self.network, self.full, self.list)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Rules):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    def to_args(self) -> list[str]:
        args = ["--full"] if self.full else []
        if self.network:
            args.append("--network")
        for path in self.read:
            args += ["--read", path]
        for path in self.write:
            args += ["--write", path]
        for path in self.list:
            args += ["--list", path]
        return args


_LISTS = {"--read": "read", "--write": "write", "--list": "list"}


def parse_args(argv: list[str] | tuple[str, ...]) -> tuple[Rules, list[str]]:
    """The rules and the command from this launcher's arguments; raises SetupError."""
    rules = Rules()
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            command = list(argv[index + 1 :])
            if not command:
                raise SetupError("no command after --")
            return rules, command
        if arg == "--full":
            rules.full = True
        elif arg == "--network":
            rules.network = True
        elif arg in _LISTS and index + 1 < len(argv):
            index += 1
            getattr(rules, _LISTS[arg]).append(argv[index])
        else:
            raise SetupError(f"unknown launcher argument {arg!r}")
        index += 1
    raise SetupError("usage: landlock_exec.py [--full] [--network] [--read P]... -- ARGV")


def confine_self(rules: Rules) -> None:
    """Apply `rules` to this process for good; raises SetupError."""
    abi = abi_version()
    if abi < 1:
        raise SetupError("Landlock is not available in this kernel")
    full = rules.full
    network = rules.network
    drop_capabilities()
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise _errno_text("prctl(PR_SET_NO_NEW_PRIVS)")
    attr = ruleset_attr(abi, handle_fs=not full, handle_net=not network)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _libc.syscall(_SYS_CREATE_RULESET, buffer, ctypes.c_size_t(len(attr)), 0)
    if ruleset < 0:
        raise _errno_text("landlock_create_ruleset")
    try:
        if not full:
            writable = fs_access_for(abi)
            for path in rules.read:
                _add_path_rule(ruleset, path, READ_ACCESS)
            for path in rules.write:
                _add_path_rule(ruleset, path, writable)
            for path in rules.list:
                _add_path_rule(ruleset, path, FS_READ_DIR)
        if _libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            raise _errno_text("landlock_restrict_self")
    finally:
        os.close(ruleset)
    if not network:
        _install_seccomp(seccomp_program(os.uname().machine))


def main(argv: list[str] | tuple[str, ...]) -> int:
    try:
        rules, command = parse_args(argv)
    except SetupError as error:
        sys.stderr.write(f"{SETUP_FAILED_PREFIX}{error}\n")
        return SETUP_FAILED_STATUS
    return supervise(rules, command)


def _run(rules: Rules, command: list[str]) -> int:
    """In the child: confine, then become the command (returns only on failure)."""
    try:
        confine_self(rules)
    except SetupError as error:
        sys.stderr.write(f"{SETUP_FAILED_PREFIX}{error}\n")
        return SETUP_FAILED_STATUS
    try:
        os.execvp(command[0], command)
    except OSError as error:
        sys.stderr.write(f"{command[0]}: {error.strerror}\n")
        return 127
    return 0  # not reached


class _ParentGone(Exception):
    """The launcher's parent (the harness's holder) died: end the command now."""


def _parent_gone(_signum: int, _frame: object) -> None:
    raise _ParentGone


def supervise(rules: Rules, command: list[str]) -> int:
    """Run the confined command as a child; when it ends, end everything it left behind."""
    parent = os.getppid()
    if _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.stderr.write(f"{SETUP_FAILED_PREFIX}{_errno_text('PR_SET_CHILD_SUBREAPER')}\n")
        return SETUP_FAILED_STATUS
    _set_handler(_SIGTERM, _parent_gone)
    _libc.prctl(_PR_SET_PDEATHSIG, _SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # it died before the line above
        return SETUP_FAILED_STATUS
    first = os.fork()
    if first == 0:
        _set_handler(_SIGTERM, _SIG_DFL)
        _libc.prctl(_PR_SET_PDEATHSIG, 0, 0, 0, 0)
        os._exit(_run(rules, command))
    # Hold none of the command's pipes: they close when its last process does.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    status = None
    try:
        while status is None:
            pid, found = os.waitpid(-1, 0)
            if pid == first:
                status = found
    except (_ParentGone, ChildProcessError):
        pass
    _set_handler(_SIGTERM, _SIG_IGN)
    # A subreaper with no child left has no descendant left either (an orphan would be ours).
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        pass
    else:
        end_descendants()
    if status is None:
        return 128 + _SIGKILL
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def end_descendants() -> None:
    """Stop every descendant (so none forks meanwhile), kill them all, reap the children.

    (reaper.py does the same for the harness; both run with the standard library alone, from
    their own files, so neither can import the other.)"""
    me = os.getpid()
    frozen: set[int] = set()
    while found := _descendants(me) - frozen:
        for pid in found:
            try:  # noqa: SIM105 - contextlib is one import more at every command's start
                os.kill(pid, _SIGSTOP)
            except OSError:
                pass
        frozen |= found
    for pid in frozen:
        try:  # noqa: SIM105
            os.kill(pid, _SIGKILL)
        except OSError:
            pass
    try:
        while True:
            os.waitpid(-1, 0)
    except ChildProcessError:
        pass


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):  # noqa: PTH208 - plain names, fast, stdlib only
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as file:  # noqa: PTH123
                    ppid = int(file.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stderr.flush()
    os._exit(status)  # no interpreter teardown: nothing is left to clean up, and it costs ms
