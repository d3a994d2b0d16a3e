"""Escalation: one approved step at a time; a skip is refused without asking; `never` refuses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sandbox_support import PROVIDERS, Machine, make_rig

from starharness.runtime.approvals import Decision
from starharness.runtime.sandbox import SANDBOX, EscalationRefusedError, Tier, check_escalation
from starharness.runtime.sandbox.tools import ESCALATION_REFUSED
from starharness.runtime.tools import FailureCode


@given(st.sampled_from(list(Tier)), st.sampled_from(list(Tier)))
def test_only_a_single_widening_step_needs_approval(current: Tier, requested: Tier) -> None:
    step = requested.rank - current.rank
    if step > 1:
        with pytest.raises(EscalationRefusedError, match="in one step"):
            check_escalation(current, requested)
    else:
        assert check_escalation(current, requested) is (step == 1)


def test_the_ceiling_caps_escalation() -> None:
    with pytest.raises(EscalationRefusedError, match="above the highest"):
        check_escalation(Tier.WORKSPACE_WRITE, Tier.FULL, ceiling=Tier.WORKSPACE_WRITE)


def _tier(rig_root: object, agent: object) -> Tier:
    from starharness.runtime.kernel import Context

    assert isinstance(rig_root, Context) and isinstance(agent, Context)
    return rig_root.get(SANDBOX).for_context(agent).tier


async def test_read_only_to_full_in_one_step_is_refused_without_a_prompt(
    machine: Machine,
) -> None:
    rig = await make_rig(machine.project, providers=["none"], dangerously_run_unconfined=True)
    try:
        outcome = await rig.call("sandbox_escalate", tier="full", reason="install tools")
        assert outcome.error_code == ESCALATION_REFUSED
        assert outcome.content == (
            "Error: cannot widen the sandbox from read-only to full in one step; ask for "
            "workspace-write first (each step needs its own approval)"
        )
        assert rig.asked == []
        assert rig.decided == []
        assert _tier(rig.root, rig.agent) is Tier.READ_ONLY
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_two_approved_steps_reach_full(machine: Machine, provider: str) -> None:
    rig = await make_rig(machine.project, providers=[provider])
    try:
        first = await rig.call("sandbox_escalate", tier="workspace-write", reason="edit")
        assert first.content == "the sandbox tier is now workspace-write (was read-only)"
        second = await rig.call("sandbox_escalate", tier="full", reason="install")
        assert second.content == "the sandbox tier is now full (was workspace-write)"
        assert [r.reason for r in rig.asked] == [
            "widen the sandbox from read-only to workspace-write: edit",
            "widen the sandbox from workspace-write to full: install",
        ]
        assert [d.decision for d in rig.decided] == [Decision.ALLOWED_ONCE] * 2
        written = await rig.shell(f"echo ok > {machine.outside}/wide.txt")
        assert not written.is_error, written.content
    finally:
        await rig.root.dispose()


async def test_never_refuses_deterministically(machine: Machine) -> None:
    rig = await make_rig(
        machine.project, providers=["none"], dangerously_run_unconfined=True, policy="never"
    )
    try:
        outcomes = [
            await rig.call("sandbox_escalate", tier="workspace-write", reason="edit")
            for _ in range(3)
        ]
        assert {o.error_code for o in outcomes} == {FailureCode.APPROVAL_UNAVAILABLE}
        assert len({o.content for o in outcomes}) == 1
        assert outcomes[0].content.startswith(
            "Error: the sandbox stays read-only (unavailable): sandbox_escalate needs approval"
        )
        assert "approval policy `never`" in outcomes[0].content
        assert _tier(rig.root, rig.agent) is Tier.READ_ONLY
    finally:
        await rig.root.dispose()


@pytest.mark.parametrize(
    ("answer", "code"),
    [(Decision.REJECTED, FailureCode.REJECTED), (Decision.CANCELLED, FailureCode.CANCELLED)],
)
async def test_a_refused_step_keeps_the_tier(machine: Machine, answer: Decision, code: str) -> None:
    rig = await make_rig(
        machine.project, providers=["none"], dangerously_run_unconfined=True, answers=[answer]
    )
    try:
        outcome = await rig.call("sandbox_escalate", tier="workspace-write", reason="edit")
        assert outcome.error_code == code
        assert _tier(rig.root, rig.agent) is Tier.READ_ONLY
    finally:
        await rig.root.dispose()


async def test_narrowing_needs_no_approval_and_tiers_are_per_agent(machine: Machine) -> None:
    rig = await make_rig(
        machine.project,
        providers=["none"],
        dangerously_run_unconfined=True,
        tier="workspace-write",
    )
    try:
        other = rig.root.child("other-agent")
        outcome = await rig.call("sandbox_escalate", tier="read-only", reason="done editing")
        assert not outcome.is_error
        assert rig.asked == []
        assert _tier(rig.root, rig.agent) is Tier.READ_ONLY
        assert _tier(rig.root, other) is Tier.WORKSPACE_WRITE
    finally:
        await rig.root.dispose()
