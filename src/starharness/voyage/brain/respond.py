"""The offline brain's entry point: one chat request in, one mock-LLM step out."""

from __future__ import annotations

from starharness.mockllm import ChatRequest, Step, Success

from .hooks import NO_HOOKS, BrainHooks, hooked_intent, hooked_plan
from .intents import classify
from .plans import Act, Plan, Situation
from .policy import decide
from .reactions import react
from .scene import SceneView
from .tools import SPEAK, calls_step, tool_call
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
    plan = hooked_plan(hooks, situation, transcript.steps)
    if plan is None:
        plan = react(situation, transcript.steps) if transcript.steps else decide(situation)
    return _step(plan)


def _step(plan: Plan) -> Step:
    if isinstance(plan, Act):
        return calls_step([tool_call(name, arguments) for name, arguments in plan.calls])
    arguments = {
        "line": plan.line,
        "mood": plan.mood,
        "options": [option.as_json() for option in plan.options],
    }
    return calls_step([tool_call(SPEAK, arguments)])
