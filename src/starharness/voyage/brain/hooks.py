"""How a game built from Omega station teaches the offline brain its own actions.

A `BrainHooks` value says, for a new action: how to recognise that the player asks for it
(`recognise`), what to do about it (`decide`, keyed by the intent's kind), and what to say once
the action answered (`react`, keyed by the tool name). Hooks run before the built-in policy, so
a game may also override a built-in kind. `make_responder(hooks)` gives the responder to put
in `Game.offline_responder`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from starharness.responder import ChatRequest, Step

from .intents import Intent
from .options import Option
from .plans import Plan, Situation
from .scene import SceneView
from .transcript import Call

Recognise = Callable[[str, SceneView, Sequence[Option]], Intent | None]
"""(what the player said, the scene, the options last offered) -> an intent, or None."""
Decide = Callable[[Situation], Plan | None]
"""The first move of a turn for one intent kind: act (`act(...)`) or speak (`Say`); None
falls through to the built-in policy."""
React = Callable[[Situation, Call], Plan | None]
"""What to do once the hooked tool answered (`call.ok`, `call.result`); None: built-in."""


@dataclass(frozen=True, slots=True)
class BrainHooks:
    """A game's additions to the offline brain (see the module docstring)."""

    recognise: Sequence[Recognise] = ()
    decide: Mapping[str, Decide] = field(default_factory=dict[str, Decide])
    react: Mapping[str, React] = field(default_factory=dict[str, React])


NO_HOOKS = BrainHooks()


def make_responder(hooks: BrainHooks = NO_HOOKS) -> Callable[[ChatRequest], Step]:
    """The offline brain's responder with `hooks` consulted first."""
    from .respond import respond_with

    def respond(request: ChatRequest) -> Step:
        return respond_with(request, hooks)

    return respond


def hooked_intent(
    hooks: BrainHooks, said: str, scene: SceneView, offered: Sequence[Option]
) -> Intent | None:
    """The first intent a hook recognises in what the player said, or None."""
    for recognise in hooks.recognise:
        intent = recognise(said, scene, offered)
        if intent is not None:
            return intent
    return None


def hooked_plan(hooks: BrainHooks, s: Situation, steps: list[list[Call]]) -> Plan | None:
    """A hook's plan for this request, or None for the built-in policy."""
    if steps:
        last = steps[-1]
        call = next((c for c in last if not c.ok), last[-1])
        react = hooks.react.get(call.name)
        return react(s, call) if react is not None else None
    decide = hooks.decide.get(s.intent.kind)
    return decide(s) if decide is not None else None
