"""The offline brain's entry point: one chat request in, one mock-LLM step out."""

from __future__ import annotations

from typing import Any, cast

from starharness.responder import ChatRequest, Step, Success

from .group import answer, from_lore, refer
from .hooks import NO_HOOKS, BrainHooks, hooked_intent, hooked_plan
from .intents import classify
from .offers import as_offers
from .plans import Act, Plan, Say, Situation
from .policy import decide
from .reactions import accepted, react
from .scene import SceneView
from .tools import DECIDE, NO_ACTION, SPEAK, calls_step, is_acceptance, tool_call
from .transcript import read_transcript
from .voice import address


def respond(request: ChatRequest) -> Step:
    """Play the NPC the request describes, as a model would: act through tools, then speak."""
    return respond_with(request, NO_HOOKS)


def respond_with(request: ChatRequest, hooks: BrainHooks) -> Step:
    """`respond`, with a game's hooks consulted before the built-in policy."""
    transcript = read_transcript(request)
    if SPEAK not in transcript.tools:
        return Success(text="I can only play characters who have a way to speak.")
    scene = transcript.scene or SceneView()
    intent = hooked_intent(hooks, transcript.said, scene, transcript.last_options) or classify(
        transcript.said, scene, transcript.last_options
    )
    situation = Situation(transcript, scene, intent, address(transcript.system, scene))
    if transcript.spoke_this_turn:
        # The line is out; a framework that still asks gets an empty answer, not a second line.
        return Success(text="")
    forced = _forced(request)
    if transcript.answering is not None:
        # Another NPC of the scene (or the player, to it and another) turned to this one: the
        # framework lets it only speak, on every turn plan.
        if forced == DECIDE:
            return _step(Act(((DECIDE, {"action": {"name": NO_ACTION}}),)))
        return _step(answer(situation))
    if forced == DECIDE:
        # Decide, act, speak: the decision comes first, and only one per turn.
        chosen = _choose(hooks, situation)
        if isinstance(chosen, Act):
            name, arguments = chosen.calls[0]
            return _step(Act(((DECIDE, {"action": {"name": name, "arguments": arguments}}),)))
        return _step(Act(((DECIDE, {"action": {"name": NO_ACTION}}),)))
    may_act = forced != SPEAK
    plan = _choose(hooks, situation, may_act=may_act)
    if isinstance(plan, Act) and not may_act:
        plan = Say(f"Let me think about that, {situation.addr}.", "neutral", ())
    # With the tools its own to choose, the brain makes its deals offers in the same step.
    return _step(plan, scene if forced is None else None)


def _choose(hooks: BrainHooks, situation: Situation, *, may_act: bool = True) -> Plan:
    """The game's hooks first, then the built-in policy (or its reaction to tool results)."""
    steps = situation.transcript.steps
    hooked = hooked_plan(hooks, situation, steps)
    if hooked is not None:
        return hooked
    if steps:
        return react(situation, steps, may_act=may_act)
    if is_acceptance(situation.transcript.said):
        return accepted(situation)
    return refer(situation) or from_lore(situation) or decide(situation)


def _forced(request: ChatRequest) -> str | None:
    """The tool the request forces, if it names one."""
    choice = request.tool_choice
    if isinstance(choice, dict):
        function = cast(dict[str, Any], choice).get("function")
        if isinstance(function, dict):
            name = cast(dict[str, Any], function).get("name")
            return name if isinstance(name, str) else None
    return None


def _step(plan: Plan, offers_from: SceneView | None = None) -> Step:
    """The plan as one model step; with `offers_from`, a line's deals become offers first."""
    if isinstance(plan, Act):
        return calls_step([tool_call(name, arguments) for name, arguments in plan.calls])
    offers: list[tuple[str, dict[str, Any]]] = []
    options = plan.options
    if offers_from is not None:
        offers, options = as_offers(options, offers_from)
    arguments = {
        "line": plan.line,
        "mood": plan.mood,
        "options": [option.as_json() for option in options],
    }
    calls = [tool_call(name, offer) for name, offer in offers]
    return calls_step([*calls, tool_call(SPEAK, arguments)])
