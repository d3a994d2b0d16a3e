"""Fail-closed: with every provider unavailable, nothing is spawned and the model is told why."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sandbox_support import Machine, make_rig

from starharness.runtime.sandbox import (
    SANDBOX,
    SANDBOX_UNAVAILABLE,
    SandboxConfig,
    SandboxUnavailableError,
    landlock_exec,
)


@pytest.fixture
def no_backend(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """bubblewrap is not installed and the kernel has no Landlock; spawns are recorded."""
    monkeypatch.setattr(landlock_exec, "abi_version", lambda: 0)
    spawned: list[tuple[Any, ...]] = []
    real = asyncio.create_subprocess_exec

    async def recording(*args: Any, **kwargs: Any) -> Any:
        spawned.append(args)
        return await real(*args, **kwargs)

    monkeypatch.setattr(asyncio, "create_subprocess_exec", recording)
    return spawned


async def test_shell_and_jobs_refuse_and_start_no_process(
    machine: Machine, no_backend: list[tuple[Any, ...]]
) -> None:
    rig = await make_rig(
        machine.project, providers=["bubblewrap", "landlock"], bwrap="/nonexistent/bwrap"
    )
    try:
        marker = machine.project / "ran"
        shell = await rig.shell(f"touch {marker}")
        job = await rig.call("job_start", command=f"touch {marker}")
        for outcome in (shell, job):
            assert outcome.is_error
            assert outcome.error_code == SANDBOX_UNAVAILABLE
            assert outcome.content.startswith(
                "Error: SANDBOX_UNAVAILABLE: no sandbox provider works here, so the command "
                "was not run"
            )
            assert "bubblewrap: bwrap not found in /nonexistent/bwrap" in outcome.content
            assert "landlock: Landlock is not enabled in kernel" in outcome.content
        assert no_backend == []
        assert rig.asked == []  # nobody is asked to approve what cannot run
        assert rig.root.get(SANDBOX).for_context(rig.agent).owner.spawned == 0
        assert not marker.exists()
    finally:
        await rig.root.dispose()


async def test_a_launcher_that_cannot_confine_never_runs_the_command(machine: Machine) -> None:
    # The launcher itself refuses when confinement fails after the spawn: exit 125, no exec.
    assert landlock_exec.main(["--read", "/", "--"]) == landlock_exec.SETUP_FAILED_STATUS
    assert landlock_exec.main(["--bogus", "--", "true"]) == landlock_exec.SETUP_FAILED_STATUS
    assert landlock_exec.main(["--read", "/", "true"]) == landlock_exec.SETUP_FAILED_STATUS


def test_the_none_provider_needs_the_loud_opt_in() -> None:
    with pytest.raises(ValueError, match="dangerously_run_unconfined: true"):
        SandboxConfig.model_validate({"providers": ["bubblewrap", "none"]})
    config = SandboxConfig.model_validate(
        {"providers": ["none"], "dangerously_run_unconfined": True}
    )
    assert [p.name for p in config.build_providers()] == ["none"]


def test_the_error_names_every_reason() -> None:
    error = SandboxUnavailableError({"bubblewrap": "missing", "landlock": "old kernel"})
    assert error.code == SANDBOX_UNAVAILABLE
    assert str(error).endswith("(bubblewrap: missing; landlock: old kernel)")
