"""A sandbox row with `tools: false` (the game profiles'): the service, and no command tools."""

from __future__ import annotations

from stack_support import resolve_test_profile, scripted_llm, start_test_runtime
from starharness.runtime.config import Patch
from starharness.runtime.sandbox import SANDBOX, SandboxPlugin
from starharness.runtime.tools import TOOLS

COMMAND_TOOLS = {"shell", "job_start", "job_read", "job_stop", "sandbox_escalate"}


def _sandbox_row(**config: object) -> Patch:
    row = {
        "id": "sandbox",
        "plugin": "starharness.runtime.sandbox:SandboxPlugin",
        "before": "agents",
        "config": config,
    }
    return Patch.of("test: a sandbox row", [row])


async def test_a_service_only_sandbox_registers_no_command_tool() -> None:
    llm = scripted_llm([])
    async with await start_test_runtime([llm, _sandbox_row(tools=False)]) as runtime:
        assert runtime.ctx.maybe(SANDBOX) is not None
        assert COMMAND_TOOLS.isdisjoint(runtime.ctx.get(TOOLS).names())
    # The default still gives agents their shell: the switch is what makes the difference.
    async with await start_test_runtime([llm, _sandbox_row()]) as runtime:
        assert set(runtime.ctx.get(TOOLS).names()) >= COMMAND_TOOLS


def test_the_game_profiles_give_no_agent_a_shell() -> None:
    for name in ("play", "serve"):
        row = resolve_test_profile(profile=name).row("sandbox")
        assert row.plugin_class is SandboxPlugin, name
        assert row.config.model_dump()["tools"] is False, name
