"""Turn plans: how an NPC turn is driven, chosen from what the provider profile declares.

`native` lets the model choose freely among the game actions and speech in each step.
`decide-act-speak` forces a schema-constrained decision (one game action with its arguments,
or none), runs it through the guards and one transaction, then forces the streamed speech step:
the NPC can act on a server that cannot stream an open tool choice, and it speaks only after
the world answered. Never chosen from a model's name.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final, Literal

from ...runtime.kernel import ServiceKey
from ...runtime.llm import ProviderProfile

TurnPlanName = Literal["native", "decide-act-speak"]
NATIVE: Final = "native"
DECIDE_ACT_SPEAK: Final = "decide-act-speak"
PLAN_NAMES: Final = (NATIVE, DECIDE_ACT_SPEAK)


@dataclass(frozen=True, slots=True)
class PlanChoice:
    """The plan an encounter runs, why, and how the world's answer reaches the model."""

    plan: TurnPlanName
    reason: str
    shows_tool_results: bool = True
    """False: the decision's result is also added as a logged context message, because the
    server's chat template drops tool messages."""
    local_prompts: bool = False
    """True: the model server evaluates every prompt token on this machine (its profile warms
    prefixes), so each token of a turn's context is waited for: a turn gets less lore, and a
    changed scene is sent as its changes (`scene_changes`)."""
    opens_lines: bool = False
    """True: the server continues a call begun in the request (`ProviderProfile.
    continues_calls`), so on the decide-act-speak plan the line after an offer begins with the
    game's words for it (`OfferTerms.says`), which the player reads while the model reads the
    offer's result."""

    def log_data(self) -> dict[str, object]:
        return {"plan": self.plan, "reason": self.reason}


TURN_PLAN: ServiceKey[PlanChoice] = ServiceKey(
    "npc.turn-plan", "the turn plan exists only on an encounter's agent layer"
)
"""The encounter's plan, on its agent layer (the decision tool reads it)."""


def choose_plan(profile: ProviderProfile | None, override: TurnPlanName | None) -> PlanChoice:
    """The plan for a provider with `profile` (None: it declares nothing), or the game's."""
    choice = _choose(profile, override)
    if profile is not None and profile.warm_prefixes:
        choice = replace(choice, local_prompts=True)
    if profile is not None and profile.continues_calls:
        choice = replace(choice, opens_lines=True)
    return choice


def _choose(profile: ProviderProfile | None, override: TurnPlanName | None) -> PlanChoice:
    shows = True if profile is None else profile.shows_tool_results
    if override is not None:
        if override not in PLAN_NAMES:
            raise ValueError(f"unknown turn plan {override!r} (known: {', '.join(PLAN_NAMES)})")
        return PlanChoice(override, "the game chose it", shows)
    if profile is None:
        return PlanChoice(NATIVE, "the provider declares no capabilities", shows)
    name = profile.name
    if not profile.supports_tool_choice:
        return PlanChoice(NATIVE, f"{name} takes no tool choice, so nothing can be forced", shows)
    missing: list[str] = []
    if not profile.streams_open_tool_choice:
        missing.append("cannot stream an open tool choice")
    if not profile.shows_tool_results:
        missing.append("shows the model no tool results")
    if not missing:
        return PlanChoice(NATIVE, f"{name} streams an open tool choice and shows tool results")
    if not profile.supports_named_tool_choice:
        reason = f"{name} {' and '.join(missing)}, but it cannot force a named call either"
        return PlanChoice(NATIVE, reason, shows)
    return PlanChoice(DECIDE_ACT_SPEAK, f"{name} {' and '.join(missing)}", shows)
