"""Real escape attempts through the shell tool, per provider: each fails and says so."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import sys
from pathlib import Path

import pytest
from sandbox_support import PROVIDERS, Machine, make_rig

from starharness.runtime.sandbox.tools import COMMAND_FAILED

# The interpreter itself, not the venv's link to it: a checkout under /tmp puts the venv inside
# the host /tmp, which a confined command never sees (it gets a private /tmp).
PYTHON = os.path.realpath(sys.executable)


def _untouched(machine: Machine) -> None:
    assert sorted(p.name for p in machine.outside.iterdir()) == ["keep.txt"] or sorted(
        p.name for p in machine.outside.iterdir()
    ) == ["keep.txt", "suid-python"]
    assert (machine.outside / "keep.txt").read_text() == "untouched\n"
    assert not Path("/etc/pwned").exists()


def _escapes(machine: Machine) -> dict[str, str]:
    outside = machine.outside
    return {
        "write outside": f"echo pwned > {outside}/new.txt",
        "through a symlink": "echo pwned > link/new.txt",
        "dot-dot": "echo pwned > ../outside/new.txt",
        "/proc/self/root": f"echo pwned > /proc/self/root{outside}/new.txt",
        "hard link": f"ln {outside}/keep.txt hard && echo pwned >> hard",
        "read ~/.ssh": "cat ~/.ssh/id_ed25519",
        "read the credentials file": f"cat {machine.harness_home}/credentials.env",
        "read the harness's environment": f"cat /proc/{os.getpid()}/environ",
        "remount / read-write": "mount -o remount,rw / && echo pwned > /etc/pwned",
        "delete outside": f"rm -f {outside}/keep.txt",
    }


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("tier", ["read-only", "workspace-write"])
async def test_escape_attempts_all_fail_with_a_clear_tool_error(
    machine: Machine, provider: str, tier: str
) -> None:
    (machine.project / "link").symlink_to(machine.outside)
    rig = await make_rig(machine.project, providers=[provider], tier=tier)
    try:
        for name, command in _escapes(machine).items():
            outcome = await rig.shell(command)
            assert outcome.is_error, f"{name}: {outcome.content}"
            assert outcome.error_code == COMMAND_FAILED, name
            assert outcome.content.startswith("Error: the command exited with status"), name
            assert "PRIVATE KEY" not in outcome.content, name
            assert "sk-" not in outcome.content, name
            _untouched(machine)
        assert (
            not (machine.project / "hard").exists()
            or (machine.project / "hard").stat().st_ino
            != (machine.outside / "keep.txt").stat().st_ino
        )
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_refusal_tells_the_model_what_the_sandbox_allows(
    machine: Machine, provider: str
) -> None:
    rig = await make_rig(machine.project, providers=[provider], tier="read-only")
    try:
        outcome = await rig.shell("echo hi > notes.txt")
        assert outcome.is_error
        assert "the sandbox may have refused this" in outcome.content
        assert "read-only" in outcome.content
        assert "sandbox_escalate" in outcome.content
        assert not (machine.project / "notes.txt").exists()
    finally:
        await rig.root.dispose()


@pytest.mark.skipif(os.geteuid() != 0, reason="making a setuid-root binary needs root")
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_setuid_binary_gains_nothing(machine: Machine, provider: str) -> None:
    suid = machine.outside / "suid-python"
    shutil.copy(PYTHON, suid)
    os.chown(suid, 0, 0)
    suid.chmod(0o4755)
    rig = await make_rig(machine.project, providers=[provider], tier="workspace-write")
    try:
        status = await rig.shell(f"{suid} -I -S -c \"print(open('/proc/self/status').read())\"")
        assert not status.is_error, status.content
        assert "NoNewPrivs:\t1" in status.content
        if provider == "bubblewrap":
            assert "CapEff:\t0000000000000000" in status.content
        write = await rig.shell(
            f"{suid} -I -S -c \"open('{machine.outside}/new.txt', 'w').write('pwned')\""
        )
        assert write.is_error and write.error_code == COMMAND_FAILED
        _untouched(machine)
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("tier", ["read-only", "full"])
async def test_no_network_in_any_tier_unless_approved(
    machine: Machine, provider: str, tier: str
) -> None:
    connected: list[bool] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connected.append(True)
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    datagrams = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    datagrams.bind(("127.0.0.1", 0))
    datagrams.setblocking(False)
    udp_port = datagrams.getsockname()[1]
    rig = await make_rig(machine.project, providers=[provider], tier=tier)
    tcp = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"
    udp = (
        "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        f"s.sendto(b'x', ('127.0.0.1', {udp_port}))"
    )
    try:
        outcome = await rig.shell(f'{PYTHON} -I -S -c "{tcp}"')
        assert outcome.is_error and outcome.error_code == COMMAND_FAILED, outcome.content
        # bubblewrap's own loopback takes the datagram; Landlock's filter refuses the socket.
        # Either way nothing reaches the host.
        await rig.shell(f'{PYTHON} -I -S -c "{udp}"')
        with pytest.raises(BlockingIOError):
            datagrams.recv(16)
        assert connected == []
        # Approved for one command, the same connection goes through (bubblewrap shares the
        # host's network then, Landlock lifts its socket filter).
        allowed = await rig.shell(f'{PYTHON} -I -S -c "{tcp}"', network=True)
        assert not allowed.is_error, allowed.content
        assert [r.tool for r in rig.asked].count("shell:network") == 1
        again = await rig.shell(f'{PYTHON} -I -S -c "{tcp}"')
        assert again.is_error  # the next command is offline again
    finally:
        datagrams.close()
        server.close()
        await server.wait_closed()
        await rig.root.dispose()
    assert connected == [True]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_commands_see_no_secrets_in_their_environment(
    machine: Machine, provider: str
) -> None:
    rig = await make_rig(machine.project, providers=[provider])
    try:
        outcome = await rig.shell("env")
        assert not outcome.is_error, outcome.content
        assert "sk-from-the-environment" not in outcome.content
        assert "DEEPSEEK_API_KEY" not in outcome.content
        assert "TMPDIR=" in outcome.content
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_each_tier_allows_what_it_promises(machine: Machine, provider: str) -> None:
    rig = await make_rig(machine.project, providers=[provider], tier="read-only")
    try:
        read = await rig.shell("cat /etc/hostname && ls / && ls ~")
        assert not read.is_error, read.content
        temp = await rig.shell('echo scratch > "$TMPDIR/x" && cat "$TMPDIR/x"')
        assert not temp.is_error and "scratch" in temp.content
        assert (await rig.call("sandbox_escalate", tier="workspace-write", reason="edit")).content
        wrote = await rig.shell("echo made > made.txt")
        assert not wrote.is_error, wrote.content
        assert (machine.project / "made.txt").read_text() == "made\n"
        assert not (await rig.call("sandbox_escalate", tier="full", reason="install")).is_error
        full = await rig.shell(f"echo full > {machine.outside}/full.txt")
        assert not full.is_error, full.content
        assert (machine.outside / "full.txt").read_text() == "full\n"
    finally:
        await rig.root.dispose()


async def test_the_same_attempts_work_unconfined_so_the_tests_above_can_fail(
    machine: Machine,
) -> None:
    (machine.project / "link").symlink_to(machine.outside)
    rig = await make_rig(
        machine.project, providers=["none"], dangerously_run_unconfined=True, tier="full"
    )
    try:
        escapes = _escapes(machine)
        for name in ("through a symlink", "read ~/.ssh", "read the credentials file"):
            outcome = await rig.shell(escapes[name])
            assert not outcome.is_error, f"{name}: {outcome.content}"
        assert (machine.outside / "new.txt").read_text() == "pwned\n"
        assert "PRIVATE KEY" in (await rig.shell(escapes["read ~/.ssh"])).content
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_dotenv_the_harness_reads_keys_from(
    machine: Machine, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The harness reads credentials from ./.env of the folder it started in. bubblewrap hides
    # it; Landlock cannot hide an entry of the project folder (docs/security.md says so) and
    # keeps the project usable instead.
    monkeypatch.chdir(machine.project)
    (machine.project / ".env").write_text("DEEPSEEK_API_KEY=sk-dotenv\n")
    rig = await make_rig(machine.project, providers=[provider], tier="workspace-write")
    try:
        outcome = await rig.shell("cat .env")
        if provider == "bubblewrap":
            assert outcome.is_error, outcome.content
            assert "sk-dotenv" not in outcome.content
        made = await rig.shell("ls -a && echo made > made.txt && cat made.txt")
        assert not made.is_error, made.content
        assert "made" in made.content
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_hidden_file_inside_a_hidden_folder_stays_hidden_and_commands_still_run(
    machine: Machine, provider: str
) -> None:
    # The harness home is hidden as a whole; hiding a file inside it too (a server hides its
    # own session store wherever it is) once made bubblewrap fail every command.
    credentials = machine.harness_home / "credentials.env"
    rig = await make_rig(machine.project, providers=[provider], hide=[str(credentials)])
    try:
        outcome = await rig.shell(f"echo ran; cat {credentials} || true")
        assert not outcome.is_error, outcome.content
        assert "ran" in outcome.content and "sk-secret" not in outcome.content
    finally:
        await rig.root.dispose()
