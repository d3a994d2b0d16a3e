"""Commands and background jobs: timeouts, output budgets, and every process owned and reaped."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import textwrap
from pathlib import Path

import pytest
from sandbox_support import PROVIDERS, Machine, make_rig, processes_with, zombie_children

from starharness.runtime.sandbox import SANDBOX, ProcessOwner
from starharness.runtime.sandbox.tools import COMMAND_TIMEOUT, JOB_ERROR


async def _gone(marker: str, *, within_s: float = 10.0) -> bool:
    """Wait (bounded) until no process carries `marker`: dying processes take a moment."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while processes_with(marker):
        if loop.time() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_job_runs_in_the_background_and_is_read_incrementally(
    machine: Machine, provider: str
) -> None:
    rig = await make_rig(machine.project, providers=[provider])
    try:
        started = await rig.call("job_start", command="echo one; read x < /dev/zero; sleep 0.3")
        assert started.content.startswith("started job-1 ["), started.content
        first = await rig.call("job_read", job_id="job-1", wait_s=10)
        assert first.content.startswith("job-1: ")
        assert "one" in first.content
        again = await rig.call("job_read", job_id="job-1")
        assert "one" not in again.content  # each read returns only what is new
        stopped = await rig.call("job_stop", job_id="job-1")
        assert stopped.content.startswith("job-1: ")
        unknown = await rig.call("job_read", job_id="job-1")
        assert unknown.error_code == JOB_ERROR
        assert unknown.content == "Error: no job 'job-1' (jobs: none)"
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_finished_job_reports_its_exit_status(machine: Machine, provider: str) -> None:
    rig = await make_rig(machine.project, providers=[provider])
    try:
        await rig.call("job_start", command="echo done; exit 3")
        read = await rig.call("job_read", job_id="job-1", wait_s=0.1)
        for _ in range(200):
            if "exited" in read.content:
                break
            read = await rig.call("job_read", job_id="job-1", wait_s=0.1)
        assert read.content.startswith("job-1: exited with 3"), read.content
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_job_that_outlives_its_agent_is_killed(machine: Machine, provider: str) -> None:
    marker = "4321.125"
    rig = await make_rig(machine.project, providers=[provider])
    await rig.call("job_start", command=f"sleep {marker} & sleep {marker}")
    assert await _wait_for(marker)
    await rig.agent.dispose()
    assert await _gone(marker)
    assert zombie_children() == []
    await rig.root.dispose()


async def _wait_for(marker: str) -> bool:
    for _ in range(200):
        if processes_with(marker):
            return True
        await asyncio.sleep(0.05)
    return False


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_no_zombie_after_100_start_stop_cycles(machine: Machine, provider: str) -> None:
    marker = "9876.5"
    rig = await make_rig(machine.project, providers=[provider], approve_commands=False)
    try:
        for index in range(100):
            started = await rig.call("job_start", command=f"sleep {marker}")
            job = started.content.split()[1]
            assert job == f"job-{index + 1}"
            stopped = await rig.call("job_stop", job_id=job)
            assert stopped.content.startswith(f"{job}: stopped"), stopped.content
        sandbox = rig.root.get(SANDBOX).for_context(rig.agent)
        assert sandbox.owner.spawned == 100
        assert sandbox.owner.running == 0
        assert zombie_children() == []
        assert await _gone(marker)
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_command_past_its_timeout_is_killed_with_what_it_printed(
    machine: Machine, provider: str
) -> None:
    marker = "7777.25"
    rig = await make_rig(machine.project, providers=[provider])
    try:
        outcome = await rig.shell(f"echo before; sleep {marker}", timeout_s=0.5)
        assert outcome.error_code == COMMAND_TIMEOUT
        assert outcome.content.startswith("Error: the command was killed after 0.5s (timeout)")
        assert "before" in outcome.content
        assert await _gone(marker)
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_large_output_keeps_head_and_tail_with_a_note(
    machine: Machine, provider: str
) -> None:
    rig = await make_rig(machine.project, providers=[provider], output_budget_bytes=1000)
    try:
        outcome = await rig.shell(
            "echo FIRST; head -c 200000 /dev/zero | tr '\\0' a; echo; echo LAST"
        )
        assert not outcome.is_error
        assert "FIRST" in outcome.content and "LAST" in outcome.content
        assert "output truncated:" in outcome.content
        assert "of 200012 bytes omitted" in outcome.content
        assert len(outcome.content) < 1500
    finally:
        await rig.root.dispose()


async def test_too_many_jobs_is_a_clear_error(machine: Machine) -> None:
    rig = await make_rig(
        machine.project, providers=["none"], dangerously_run_unconfined=True, max_jobs=2
    )
    try:
        for _ in range(2):
            assert not (await rig.call("job_start", command="sleep 100")).is_error
        third = await rig.call("job_start", command="sleep 100")
        assert third.error_code == JOB_ERROR
        assert "2 jobs are already running" in third.content
    finally:
        await rig.root.dispose()


_HARNESS = textwrap.dedent(
    """
    import asyncio, os, sys
    sys.path.insert(0, {support!r})
    from sandbox_support import make_rig
    from pathlib import Path
    from starharness.runtime.sandbox import SANDBOX

    async def main():
        rig = await make_rig(Path({project!r}), providers=[{provider!r}])
        await rig.call("job_start", command="sleep {marker}")
        sandbox = rig.root.get(SANDBOX).for_context(rig.agent)
        print(await sandbox.temp_dir(), flush=True)
        await asyncio.sleep(3600)

    asyncio.run(main())
    """
)


async def _removed(folder: Path) -> bool:
    for _ in range(200):
        if not os.path.lexists(folder):  # noqa: ASYNC240 - a cheap stat in a test
            return True
        await asyncio.sleep(0.05)
    return False


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_jobs_die_with_a_killed_harness_process(machine: Machine, provider: str) -> None:
    marker = "5555.75"
    script = _HARNESS.format(
        support=str(Path(__file__).parent),
        project=str(machine.project),
        provider=provider,
        marker=marker,
    )
    harness = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stdout=asyncio.subprocess.PIPE
    )
    try:
        assert harness.stdout is not None
        temp = Path((await harness.stdout.readline()).decode().strip())
        assert temp.name.startswith("star-harness-sandbox-")
        assert await _wait_for(marker)
        harness.send_signal(signal.SIGKILL)  # no cleanup code of the harness runs
        await harness.wait()
        assert await _gone(marker)
        assert await _removed(temp)
    finally:
        if harness.returncode is None:
            harness.kill()
            await harness.wait()


async def test_a_killed_process_reports_sigkill_and_leaves_no_zombie(tmp_path: Path) -> None:
    owner = ProcessOwner()
    process = await owner.spawn(["sleep", "100"], {"PATH": "/usr/bin:/bin"}, tmp_path)
    # asyncio must reap it itself: a second reaper would make it report 255.
    assert await owner.kill(process) == -signal.SIGKILL
    assert owner.running == 0
    assert zombie_children() == []
