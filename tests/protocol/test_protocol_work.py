"""Plans and background jobs through the session protocol: `plan.update` and `job.update` stream
as they change (a running job's output on each read, its end when stopped or disposed), and
`resume` answers with the current plan and each job's latest state from the session's log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from session_protocol_support import call, mock_rows, say
from starharness import composition
from starharness.mockllm import MockLlmServer
from starharness.runtime.approvals import APPROVALS
from starharness.runtime.config import Patch, start
from starharness.runtime.protocol import (
    ApprovalRouter,
    HostInfo,
    JobUpdated,
    PlanUpdated,
    SessionHost,
    SessionOpened,
)
from starharness.runtime.protocol.models import WireModel

LONG_JOB = "echo first; echo second; sleep 60"


def _patch(base_url: str, project: Path) -> Patch:
    rows: list[dict[str, Any]] = [
        *mock_rows(base_url, project),
        {"id": "sessions", "config": {"store": "sqlite"}},
        {
            "id": "sandbox",
            "plugin": "starharness.runtime.sandbox:SandboxPlugin",
            "config": {"providers": ["bubblewrap", "landlock"]},
            "before": "agents",
        },
        {"id": "goals", "plugin": "starharness.runtime.context:GoalsPlugin"},
        {"id": "approvals", "merge": {"allow": ["job_start"]}},
    ]
    return Patch.of("test", rows)


def _plan(*statuses: str, revision: int) -> dict[str, Any]:
    items = [{"id": f"s{n}", "text": f"step {n}", "status": s} for n, s in enumerate(statuses)]
    return call("todo_write", {"items": items, "expected_revision": revision})


async def test_plan_and_job_updates_stream_and_come_back_on_resume(
    home: Path, project: Path, mock: MockLlmServer
) -> None:
    mock.script(
        "w1",
        [
            _plan("in_progress", "pending", revision=0),
            call("job_start", {"command": LONG_JOB}),
            call("job_read", {"job_id": "job-1", "wait_s": 5}),
            _plan("done", "in_progress", revision=1),
            say("It runs."),
            call("job_stop", {"job_id": "job-1"}),
            say("Stopped."),
        ],
    )
    resolved = composition.load("task", [_patch(mock.base_url, project)], home=home)
    async with await start(resolved) as runtime:
        ctx = runtime.ctx
        sent: list[WireModel] = []
        router = ApprovalRouter(ctx.maybe(APPROVALS))
        host = SessionHost(ctx, router, HostInfo(profile="task"), sent.append)
        await host.call("initialize", {})
        await host.call("session", {"action": "create", "sessionId": "w1"})
        await host.call("prompt", {"sessionId": "w1", "text": "plan and start"})
        plans = [u for u in sent if isinstance(u, PlanUpdated)]
        assert [(p.revision, [s.status for s in p.items]) for p in plans] == [
            (1, ["in_progress", "pending"]),
            (2, ["done", "in_progress"]),
        ]
        jobs = [u for u in sent if isinstance(u, JobUpdated)]
        assert [(j.job_id, j.command, j.state) for j in jobs][:2] == [
            ("job-1", LONG_JOB, "running"),
            ("job-1", LONG_JOB, "running"),
        ]
        # job_read waited for output: the read's update carries what the job printed so far.
        assert jobs[1].tail.startswith("first\n"), jobs[1]

        sent.clear()
        await host.call("prompt", {"sessionId": "w1", "text": "stop it"})
        [stopped] = [u for u in sent if isinstance(u, JobUpdated)]
        assert (stopped.state, stopped.exit_code) == ("stopped", None)
        assert stopped.tail == "first\nsecond\n"

        # A second job outlives its connection: closing the session stops it and logs that.
        mock.script("w1", [call("job_start", {"command": "echo again; sleep 60"}), say("ok")])
        await host.call("prompt", {"sessionId": "w1", "text": "start another"})
        await host.aclose()

        fresh = SessionHost(ctx, router, HostInfo(profile="task"), sent.append)
        await fresh.call("initialize", {})
        opened = SessionOpened.model_validate_json(
            await fresh.call("session", {"action": "resume", "sessionId": "w1"})
        )
        assert opened.plan is not None and opened.plan.revision == 2
        assert [s.status for s in opened.plan.items] == ["done", "in_progress"]
        assert [(j.job_id, j.state) for j in opened.jobs] == [
            ("job-1", "stopped"),
            ("job-2", "stopped"),
        ]
        assert opened.jobs[0].tail == "first\nsecond\n"
        await fresh.aclose()
    mock.assert_complete()


async def test_a_session_without_plan_or_jobs_resumes_with_neither(
    home: Path, project: Path, mock: MockLlmServer
) -> None:
    mock.script("w2", [say("hello")])
    resolved = composition.load("task", [_patch(mock.base_url, project)], home=home)
    async with await start(resolved) as runtime:
        ctx = runtime.ctx
        router = ApprovalRouter(ctx.maybe(APPROVALS))
        host = SessionHost(ctx, router, HostInfo(profile="task"), lambda _update: None)
        await host.call("initialize", {})
        await host.call("session", {"action": "create", "sessionId": "w2"})
        await host.call("prompt", {"sessionId": "w2", "text": "hi"})
        await host.aclose()
        fresh = SessionHost(ctx, router, HostInfo(profile="task"), lambda _update: None)
        await fresh.call("initialize", {})
        text = await fresh.call("session", {"action": "resume", "sessionId": "w2"})
        opened = SessionOpened.model_validate_json(text)
        assert opened.plan is None and opened.jobs == []
        assert '"plan"' not in text  # absent, not null, on the wire
        await fresh.aclose()
