"""A real agent over the mock LLM: every command, refusal, tier change and approval is logged."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sandbox_support import PROVIDERS, Machine

from stack_support import start_test_runtime
from starharness.mockllm import MockLlmServer, ScriptedCall, Success, ToolCalls
from starharness.runtime.config import Patch
from starharness.runtime.loop import AGENTS, SESSION_EVENT, LoggedEvent
from starharness.runtime.sandbox import COMMAND_DONE, COMMAND_RUN, SANDBOX_MODE
from starharness.runtime.session import SessionEvent
from starharness.runtime.session import event_types as ev


class Recorder:
    def __init__(self) -> None:
        self.events: list[SessionEvent] = []

    def __call__(self, logged: LoggedEvent) -> None:
        self.events.append(logged.event)

    def of(self, type_: str) -> list[SessionEvent]:
        return [e for e in self.events if e.type == type_]


def _mock_rows(base_url: str) -> list[dict[str, Any]]:
    llm = {"provider": "openai-compatible", "model": "mock-model", "base_url": base_url}
    return [
        {"id": "llm", "config": llm},
        {"id": "sessions", "config": {"store": "memory"}},
    ]


def _calls(*calls: tuple[str, dict[str, object]]) -> ToolCalls:
    return ToolCalls(
        calls=[ScriptedCall(name=name, arguments=json.dumps(args)) for name, args in calls]
    )


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_commands_tiers_and_approvals_are_session_events(
    machine: Machine, provider: str
) -> None:
    sandbox_rows = Patch.of(
        "sandbox test",
        [
            {
                "id": "sandbox",
                "plugin": "starharness.runtime.sandbox:SandboxPlugin",
                "config": {"providers": [provider], "root": str(machine.project)},
                "before": "agents",
            },
            {"id": "approvals", "merge": {"allow": ["shell", "sandbox_escalate"]}},
        ],
    )
    async with MockLlmServer() as mock:
        mock.script(
            "s1",
            [
                _calls(("shell", {"command": "echo hello"})),
                _calls(("sandbox_escalate", {"tier": "full", "reason": "skip"})),
                _calls(("sandbox_escalate", {"tier": "workspace-write", "reason": "edit"})),
                _calls(("shell", {"command": "echo hi > made.txt"})),
                Success(text="done"),
            ],
        )
        patches = [Patch.of("mock", _mock_rows(mock.base_url)), sandbox_rows]
        async with await start_test_runtime(patches, home=machine.harness_home) as runtime:
            recorder = Recorder()
            handle = await runtime.ctx.get(AGENTS).create(
                "s1", setup=lambda ctx: ctx.on(SESSION_EVENT, recorder)
            )
            handle.agent.followup("make a file")
            await handle.agent.when_idle()
            await handle.dispose()
    assert (machine.project / "made.txt").read_text() == "hi\n"
    runs = recorder.of(COMMAND_RUN)
    assert [(e.data["command"], e.data["tier"], e.data["provider"]) for e in runs] == [
        ("echo hello", "read-only", provider),
        ("echo hi > made.txt", "workspace-write", provider),
    ]
    assert [e.data["exit_code"] for e in recorder.of(COMMAND_DONE)] == [0, 0]
    [mode] = recorder.of(SANDBOX_MODE)
    assert (mode.data["previous"], mode.data["tier"]) == ("read-only", "workspace-write")
    asked = [e.data["tool"] for e in recorder.of(ev.APPROVAL_ASKED)]
    assert asked == ["shell", "sandbox_escalate", "shell"]  # the skip was never asked about
    decided = [e.data["decision"] for e in recorder.of(ev.APPROVAL_DECIDED)]
    assert decided == ["allowed_once"] * 3
    results = recorder.of(ev.TOOL_RESULT)
    assert "cannot widen the sandbox from read-only to full in one step" in str(
        results[1].data["content"]
    )
