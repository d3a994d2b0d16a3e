"""A command's processes never outlive their owner, and a command runs a bounded number of them.

Each test gives its processes a unique marker in their command lines and scans /proc for it
with a generous polling deadline: "gone" means no process carries the marker any more.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_support import PROVIDERS, Machine, make_rig, processes_with, zombie_children

from starharness.runtime.sandbox import SANDBOX, ProcessOwner, processes
from starharness.runtime.sandbox.tools import COMMAND_FAILED, COMMAND_TIMEOUT, PROCESS_LIMIT


def _marker() -> str:
    """A number `sleep` accepts and no other process on the machine carries."""
    return f"{uuid.uuid4().int % 10**9}.{uuid.uuid4().int % 10**6:06d}7"


async def _gone(marker: str, *, within_s: float = 15.0) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while processes_with(marker):
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def _at_least(marker: str, count: int, *, within_s: float = 30.0) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while len(processes_with(marker)) < count:
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


@pytest.fixture
def no_cgroup(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """As on a machine where no pids cgroup is writable: the watcher is the limit."""

    class _NoCgroups(processes._PidsCgroups):  # pyright: ignore[reportPrivateUsage]
        def root(self) -> None:
            return None

    monkeypatch.setattr(processes, "_PIDS", _NoCgroups())
    yield


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_busy_loop_of_issue_38_does_not_outlive_its_command(
    machine: Machine, provider: str
) -> None:
    marker = _marker()
    rig = await make_rig(machine.project, providers=[provider], approve_commands=False)
    try:
        # The probe of issue 38: the first process ends at once, its background loop held the
        # output open until the timeout and then ran on (for its 40 s) reparented to PID 1.
        probe = await rig.shell(
            f"timeout 40 sh -c 'while :; do :; done; : {marker}' & echo started", timeout_s=3
        )
        assert "started" in probe.content, probe.content
        assert await _gone(marker)
        # And with the first process still running at the timeout.
        timed_out = await rig.shell(
            f"timeout 40 sh -c 'while :; do :; done; : {marker}' & sleep {marker}", timeout_s=2
        )
        assert timed_out.error_code == COMMAND_TIMEOUT, timed_out.content
        assert await _gone(marker)
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_300_background_sleepers_of_one_command_are_all_gone(
    machine: Machine, provider: str
) -> None:
    marker = _marker()
    rig = await make_rig(machine.project, providers=[provider], approve_commands=False)
    try:
        outcome = await rig.shell(
            f"i=0; while [ $i -lt 300 ]; do sleep {marker} & i=$((i+1)); done; echo spawned",
            timeout_s=8,
        )
        assert "spawned" in outcome.content, outcome.content
        assert await _gone(marker)
        assert zombie_children() == []
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_setsid_child_ends_with_its_command(machine: Machine, provider: str) -> None:
    marker = _marker()
    rig = await make_rig(machine.project, providers=[provider], approve_commands=False)
    try:
        ended = await rig.shell(f"setsid sleep {marker} & setsid -f sleep {marker}; echo ok")
        assert not ended.is_error, ended.content
        assert await _gone(marker)
        timed_out = await rig.shell(f"setsid -f sleep {marker}; sleep {marker}", timeout_s=1)
        assert timed_out.error_code == COMMAND_TIMEOUT, timed_out.content
        assert await _gone(marker)
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_job_stop_kills_the_jobs_whole_tree(machine: Machine, provider: str) -> None:
    marker = _marker()
    rig = await make_rig(machine.project, providers=[provider], approve_commands=False)
    try:
        started = await rig.call(
            "job_start",
            command=f"setsid -f sleep {marker}; (sleep {marker} &); sleep {marker} & "
            f"echo up; sleep {marker}",
        )
        assert started.content.startswith("started job-1"), started.content
        assert await _at_least(marker, 4)
        stopped = await rig.call("job_stop", job_id="job-1")
        assert stopped.content.startswith("job-1: stopped"), stopped.content
        assert await _gone(marker)
        assert zombie_children() == []
    finally:
        await rig.root.dispose()


_HARNESS = textwrap.dedent(
    """
    import asyncio, sys
    sys.path.insert(0, {support!r})
    from sandbox_support import make_rig
    from pathlib import Path

    async def main():
        rig = await make_rig(Path({project!r}), providers=[{provider!r}], approve_commands=False)
        await rig.call("job_start", command={job!r})
        print("ready", flush=True)
        await rig.shell({probe!r}, timeout_s=500)
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_harness_killed_with_sigkill_leaves_no_process_of_its_commands(
    machine: Machine, provider: str
) -> None:
    marker = _marker()
    script = _HARNESS.format(
        support=str(Path(__file__).parent),
        project=str(machine.project),
        provider=provider,
        # A running tree with a setsid child, and a command whose first process has ended.
        job=f"setsid -f sleep {marker}; (sleep {marker} &); sleep {marker}",
        probe=f"setsid -f sleep {marker}; sleep {marker} & echo started",
    )
    harness = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert harness.stdout is not None
        assert (await harness.stdout.readline()).strip() == b"ready"
        assert await _at_least(marker, 3)
        await asyncio.sleep(0.5)  # the probe is under way
        root = processes.pids_cgroup_root()
        own = None if root is None else root.path.parent / f"star-harness-{harness.pid}"
        assert own is None or own.is_dir()
        harness.send_signal(signal.SIGKILL)  # no cleanup code of the harness runs
        await harness.wait()
        assert await _gone(marker)
        if own is not None:  # the harness's cgroups went with it
            assert await _removed(own)
    finally:
        if harness.returncode is None:
            harness.kill()
            await harness.wait()


async def _removed(folder: Path) -> bool:
    for _ in range(300):
        if not folder.exists():  # noqa: ASYNC240 - a cheap stat in a test
            return True
        await asyncio.sleep(0.05)
    return False


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_the_process_limit_refuses_a_burst_and_the_harness_lives_on(
    machine: Machine, provider: str
) -> None:
    if processes.pids_cgroup_root() is None:
        pytest.skip("no writable pids cgroup here (the watcher's test covers this machine)")
    marker = _marker()
    rig = await make_rig(
        machine.project, providers=[provider], approve_commands=False, max_processes=32
    )
    try:
        burst = await rig.shell(
            f"i=0; while [ $i -lt 200 ]; do sleep {marker} & i=$((i+1)); done; echo all started"
        )
        assert burst.error_code == COMMAND_FAILED, burst.content  # sh: Cannot fork
        assert "all started" not in burst.content
        assert "the sandbox refused " in burst.content
        assert "a command may run at most 32 processes at once" in burst.content
        assert await _gone(marker)
        # A real fork bomb churns at the limit until its timeout, then all of it ends.
        bomb = await rig.shell(f"b() {{ b | b & }}; b; sleep {marker}", timeout_s=3)
        assert bomb.error_code == COMMAND_TIMEOUT, bomb.content
        assert "a command may run at most 32 processes at once" in bomb.content
        assert await _gone(marker)
        alive = await rig.shell("echo still here")
        assert not alive.is_error and "still here" in alive.content
        sandbox = rig.root.get(SANDBOX).for_context(rig.agent)
        assert sandbox.owner.running == 0
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_without_a_cgroup_a_command_past_the_limit_is_killed(
    machine: Machine, provider: str, no_cgroup: None
) -> None:
    marker = _marker()
    rig = await make_rig(
        machine.project, providers=[provider], approve_commands=False, max_processes=32
    )
    try:
        burst = await rig.shell(
            f"i=0; while [ $i -lt 100 ]; do sleep {marker} & i=$((i+1)); done; sleep {marker}",
            timeout_s=60,
        )
        assert burst.error_code == PROCESS_LIMIT, burst.content
        assert burst.content.startswith(
            "Error: the command was killed: it ran more than 32 processes at once"
        )
        assert await _gone(marker)
        alive = await rig.shell("echo still here")
        assert not alive.is_error and "still here" in alive.content
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_command_within_the_limit_is_not_bothered(machine: Machine, provider: str) -> None:
    rig = await make_rig(
        machine.project, providers=[provider], approve_commands=False, max_processes=32
    )
    try:
        outcome = await rig.shell("for i in 1 2 3 4 5 6 7 8; do sleep 0.2 & done; wait; echo ok")
        assert not outcome.is_error, outcome.content
        assert "refused" not in outcome.content
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_without_a_cgroup_setsid_children_and_a_jobs_tree_still_end(
    machine: Machine, provider: str, no_cgroup: None
) -> None:
    # bubblewrap: the namespace's init dies with the command; Landlock: the launcher, their
    # subreaper, kills what the command left when it ends or is stopped.
    marker = _marker()
    rig = await make_rig(machine.project, providers=[provider], approve_commands=False)
    try:
        ended = await rig.shell(f"setsid -f sleep {marker}; (sleep {marker} &); echo ok")
        assert not ended.is_error, ended.content
        assert await _gone(marker)
        timed_out = await rig.shell(f"setsid -f sleep {marker}; sleep {marker}", timeout_s=1)
        assert timed_out.error_code == COMMAND_TIMEOUT, timed_out.content
        assert await _gone(marker)
        await rig.call("job_start", command=f"setsid -f sleep {marker}; sleep {marker}")
        assert await _at_least(marker, 2)
        stopped = await rig.call("job_stop", job_id="job-1")
        assert stopped.content.startswith("job-1: stopped"), stopped.content
        assert await _gone(marker)
        assert zombie_children() == []
    finally:
        await rig.root.dispose()


async def test_a_command_killed_the_moment_it_starts_leaves_nothing(tmp_path: Path) -> None:
    # Its holder may not have joined its cgroup yet: the kill must not rely on the cgroup alone.
    marker = _marker()
    owner = ProcessOwner()
    for _ in range(30):
        process = await owner.spawn(
            ["sh", "-c", f"sleep {marker} & sleep {marker}"], {"PATH": "/usr/bin:/bin"}, tmp_path
        )
        async with asyncio.timeout(30):
            await owner.kill(process)
    assert owner.running == 0
    assert await _gone(marker)
    assert zombie_children() == []
