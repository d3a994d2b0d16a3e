"""Approvals: the closed set of decisions, both services, the plugin, and the pipeline's asks."""

from __future__ import annotations

import asyncio

import pytest

from starharness.runtime.approvals import (
    APPROVAL_ASKED,
    APPROVAL_DECIDED,
    APPROVALS,
    ApprovalDecided,
    ApprovalRequest,
    ApprovalsConfig,
    ApprovalsPlugin,
    Decision,
    InteractiveApprovals,
    NonInteractiveApprovals,
)
from starharness.runtime.kernel import Context, Next
from starharness.runtime.llm.types import ToolCall
from starharness.runtime.tools import (
    REQUIRES_APPROVAL,
    TOOL_PRE_EXECUTE,
    TOOLS,
    CancelSignal,
    FailureCode,
    PreExecute,
    ToolOutcome,
    ToolsConfig,
    ToolsPlugin,
    tool,
)

ran: list[str] = []


@tool(tags=[REQUIRES_APPROVAL])
def launch(target: str) -> str:
    """Launch something (needs approval)."""
    ran.append(target)
    return f"launched {target}"


@tool
def wave() -> str:
    """Harmless."""
    return "waved"


@pytest.fixture(autouse=True)
def _clear_ran() -> None:
    ran.clear()


async def _agent(approvals: ApprovalsConfig | None, **tools_config: object) -> Context:
    root = Context()
    await ToolsPlugin().setup(root.fork("tools"), ToolsConfig.model_validate(tools_config))
    if approvals is not None:
        await ApprovalsPlugin().setup(root.fork("approvals"), approvals)
    root.get(TOOLS).register(launch)
    root.get(TOOLS).register(wave)
    return root.child("agent")


async def _launch(agent: Context, target: str = "probe") -> ToolOutcome:
    call = ToolCall("c1", "launch", f'{{"target": "{target}"}}')
    [outcome] = await agent.get(TOOLS).execute_calls([call], session_id="s-1")
    return outcome


def _report(agent: Context) -> list[str]:
    seen: list[str] = []

    def asked(request: ApprovalRequest) -> None:
        seen.append(f"asked {request.tool} {request.call_id} {request.session_id}")

    def decided(decided: ApprovalDecided) -> None:
        seen.append(f"decided {decided.request.tool} {decided.decision}")

    agent.on(APPROVAL_ASKED, asked)
    agent.on(APPROVAL_DECIDED, decided)
    return seen


def test_decisions_are_a_closed_set() -> None:
    assert {d.value for d in Decision} == {"allowed_once", "rejected", "cancelled", "unavailable"}
    assert [d for d in Decision if d.allowed] == [Decision.ALLOWED_ONCE]


async def test_allow_list_runs_listed_tools_and_reports_the_decision() -> None:
    agent = await _agent(ApprovalsConfig(policy="never", allow=["launch"]))
    seen = _report(agent)
    outcome = await _launch(agent)
    assert outcome.content == "launched probe"
    assert ran == ["probe"]
    assert seen == ["asked launch c1 s-1", "decided launch allowed_once"]


async def test_unlisted_tools_are_refused_with_how_to_allow_them() -> None:
    agent = await _agent(ApprovalsConfig(policy="never", allow=["other"]))
    seen = _report(agent)
    outcome = await _launch(agent)
    assert outcome.content == (
        "Error: launch needs approval, which is never asked for in this run (approval policy "
        "`never`); start the run with --allow launch to allow it"
    )
    assert outcome.error_code == FailureCode.APPROVAL_UNAVAILABLE
    assert ran == []
    assert seen == ["asked launch c1 s-1", "decided launch unavailable"]


async def test_never_refuses_every_ask_but_not_other_tools() -> None:
    agent = await _agent(ApprovalsConfig(policy="never"))
    assert (await _launch(agent)).error_code == FailureCode.APPROVAL_UNAVAILABLE
    [waved] = await agent.get(TOOLS).execute_calls([ToolCall("w", "wave", "{}")])
    assert waved.content == "waved"


async def test_without_an_approval_service_asks_are_unavailable() -> None:
    agent = await _agent(None)
    seen = _report(agent)
    outcome = await _launch(agent)
    assert outcome.content == "Error: launch needs approval, and no approval service is configured"
    assert seen == ["asked launch c1 s-1", "decided launch unavailable"]


async def test_interactive_user_can_allow_once_or_reject() -> None:
    agent = await _agent(ApprovalsConfig(policy="ask"))
    service = agent.get(APPROVALS)
    assert isinstance(service, InteractiveApprovals)
    answers = [Decision.ALLOWED_ONCE, Decision.REJECTED]
    questions: list[str] = []

    async def ask(request: ApprovalRequest) -> Decision:
        questions.append(request.arguments)
        return answers.pop(0)

    service.attach(ask)
    assert (await _launch(agent, "a")).content == "launched a"
    rejected = await _launch(agent, "b")
    assert rejected.content == "Error: the user rejected this call to launch"
    assert rejected.error_code == FailureCode.REJECTED
    assert questions == ['{"target": "a"}', '{"target": "b"}']
    assert ran == ["a"]


async def test_an_approval_covers_one_call_so_the_next_call_asks_again() -> None:
    agent = await _agent(ApprovalsConfig(policy="ask"))
    service = agent.get(APPROVALS)
    assert isinstance(service, InteractiveApprovals)
    asked: list[str] = []

    async def ask(request: ApprovalRequest) -> Decision:
        asked.append(request.arguments)
        return Decision.ALLOWED_ONCE

    service.attach(ask)
    await _launch(agent, "a")
    await _launch(agent, "a")
    assert asked == ['{"target": "a"}', '{"target": "a"}']
    assert ran == ["a", "a"]


async def test_a_dismissed_question_is_cancelled_and_the_call_does_not_run() -> None:
    agent = await _agent(ApprovalsConfig(policy="ask"))
    service = agent.get(APPROVALS)
    assert isinstance(service, InteractiveApprovals)
    seen = _report(agent)

    async def dismiss(request: ApprovalRequest) -> Decision:
        return Decision.CANCELLED

    service.attach(dismiss)
    outcome = await _launch(agent)
    assert outcome.error_code == FailureCode.CANCELLED
    assert outcome.content == "Error: the approval of this call to launch was cancelled"
    assert seen == ["asked launch c1 s-1", "decided launch cancelled"]
    assert ran == []


async def test_never_refuses_the_same_way_every_time_without_asking_anyone() -> None:
    agent = await _agent(ApprovalsConfig(policy="never"))
    outcomes = [await _launch(agent) for _ in range(3)]
    assert {o.content for o in outcomes} == {outcomes[0].content}
    assert {o.error_code for o in outcomes} == {FailureCode.APPROVAL_UNAVAILABLE}
    assert ran == []


async def test_interactive_asks_one_question_at_a_time() -> None:
    service = InteractiveApprovals()
    open_questions = 0
    most = 0
    release = asyncio.Event()

    async def ask(request: ApprovalRequest) -> Decision:
        nonlocal open_questions, most
        open_questions += 1
        most = max(most, open_questions)
        await release.wait()
        open_questions -= 1
        return Decision.ALLOWED_ONCE

    service.attach(ask)
    requests = [ApprovalRequest(tool=f"t{i}", call_id=str(i), arguments="{}") for i in range(3)]
    pending = [asyncio.create_task(service.decide(r)) for r in requests]
    await asyncio.sleep(0)
    release.set()
    assert await asyncio.gather(*pending) == [Decision.ALLOWED_ONCE] * 3
    assert most == 1


async def test_interactive_without_a_prompt_is_unavailable_and_detach_works() -> None:
    service = InteractiveApprovals()
    request = ApprovalRequest(tool="launch", call_id="1", arguments="{}", reason="fires a rocket")
    assert await service.decide(request) is Decision.UNAVAILABLE
    assert service.explain(request, Decision.UNAVAILABLE) == (
        "launch needs approval (fires a rocket), and no one is here to give it"
    )

    async def ask(request: ApprovalRequest) -> Decision:
        return Decision.ALLOWED_ONCE

    detach = service.attach(ask)
    assert await service.decide(request) is Decision.ALLOWED_ONCE
    detach()
    assert await service.decide(request) is Decision.UNAVAILABLE


async def test_a_failing_prompt_is_unavailable_not_a_crash() -> None:
    agent = await _agent(ApprovalsConfig(policy="ask"))
    service = agent.get(APPROVALS)
    assert isinstance(service, InteractiveApprovals)

    async def broken(request: ApprovalRequest) -> Decision:
        raise OSError("terminal closed")

    service.attach(broken)
    outcome = await _launch(agent)
    assert outcome.content == (
        "Error: launch needs approval, and asking for it failed: terminal closed"
    )
    assert ran == []


async def test_a_pre_execute_policy_can_ask_with_a_reason_and_another_can_allow() -> None:
    agent = await _agent(ApprovalsConfig(policy="never"))
    requests: list[ApprovalRequest] = []
    agent.on(APPROVAL_ASKED, requests.append)

    async def cautious(check: PreExecute, next_: Next[PreExecute]) -> PreExecute | None:
        if check.tool.name == "wave":
            return check.ask("waving is risky today")
        return await next_(check)

    dispose = agent.on_waterfall(TOOL_PRE_EXECUTE, cautious)
    [waved] = await agent.get(TOOLS).execute_calls([ToolCall("w", "wave", "{}")])
    assert waved.content == (
        "Error: wave needs approval (waving is risky today), which is never asked for in this "
        "run (approval policy `never`); start the run with --allow wave to allow it"
    )
    assert requests[0].reason == "waving is risky today"
    dispose()

    async def trusting(check: PreExecute, next_: Next[PreExecute]) -> PreExecute | None:
        return await next_(check.allow())

    agent.on_waterfall(TOOL_PRE_EXECUTE, trusting)
    assert (await _launch(agent)).content == "launched probe"


async def test_tools_config_ask_lists_names_and_tags() -> None:
    agent = await _agent(ApprovalsConfig(policy="never"), ask=["wave"])
    [waved] = await agent.get(TOOLS).execute_calls([ToolCall("w", "wave", "{}")])
    assert waved.error_code == FailureCode.APPROVAL_UNAVAILABLE
    # The default tag rule was replaced, so launch runs without asking.
    assert (await _launch(agent)).content == "launched probe"


async def test_cancel_while_waiting_for_the_user_cancels_the_call() -> None:
    agent = await _agent(ApprovalsConfig(policy="ask"))
    service = agent.get(APPROVALS)
    assert isinstance(service, InteractiveApprovals)
    waiting = asyncio.Event()

    async def slow_user(request: ApprovalRequest) -> Decision:
        waiting.set()
        await asyncio.Event().wait()
        return Decision.ALLOWED_ONCE

    service.attach(slow_user)
    seen = _report(agent)
    signal = CancelSignal()
    call = ToolCall("c1", "launch", '{"target": "x"}')
    batch = asyncio.create_task(
        agent.get(TOOLS).execute_calls([call], cancel=signal, session_id="s-1")
    )
    await waiting.wait()
    signal.set()
    [outcome] = await batch
    assert outcome.error_code == FailureCode.CANCELLED
    assert seen == ["asked launch c1 s-1", "decided launch cancelled"]
    assert ran == []


def test_config_policies_and_the_old_mode_key() -> None:
    assert ApprovalsConfig().policy == "never"
    assert ApprovalsConfig.model_validate({"mode": "interactive"}).policy == "ask"
    assert ApprovalsConfig.model_validate({"mode": "deny"}).policy == "never"
    legacy = ApprovalsConfig.model_validate({"mode": "allow-list", "allow": ["launch"]})
    assert (legacy.policy, legacy.allow) == ("never", ["launch"])
    with pytest.raises(ValueError, match="unknown approvals mode 'sometimes'"):
        ApprovalsConfig.model_validate({"mode": "sometimes"})
    with pytest.raises(ValueError, match="policy"):
        ApprovalsConfig.model_validate({"policy": "always"})


async def test_non_interactive_hint_is_configurable() -> None:
    service = NonInteractiveApprovals(["a"], hint="add {tool} to approvals.allow")
    request = ApprovalRequest(tool="b", call_id="1", arguments="{}")
    assert await service.decide(request) is Decision.UNAVAILABLE
    assert service.explain(request, Decision.UNAVAILABLE).endswith("add b to approvals.allow")
