"""The decision tool of the decide-act-speak plan: one game action with its arguments, or none.

Its schema is every game action's own schema side by side (`anyOf`), so a server that
constrains a forced call by its schema lets the model produce only a valid decision. The
chosen action runs as it would natively: its guards, one transaction, its audit record.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, cast

from pydantic import ValidationError

from ...runtime.kernel import ServiceKey
from ...runtime.llm import AssistantMessage, Message, ToolCall, ToolMessage
from ...runtime.tools import (
    ToolArgsError,
    ToolDefinition,
    ToolRunContext,
    define_raw_tool,
    describe_invalid,
)
from ..actions.offers import OFFERED, PITCH
from ..speech import parse_arguments
from .entities import decode_entities
from .plans import TURN_PLAN

DECISION_TOOL: Final = "decide"
NO_ACTION: Final = "none"
DECISION_TEMPERATURE: Final = 0.0
"""A decision is a choice, not prose: the model's most likely one, every time. Sampled (a
local server's default is about 0.8) a small model reads the same line as a sale one turn and
a purchase the next. Sent when the agent sets no temperature; speech keeps the server's."""
OUTCOME_PREFIX: Final = "Result of your decision: "
"""Starts the context message that repeats a decision's result for a server that shows the
model no tool results (see `_outcome_for_model`)."""
_NOT_YET: Final = "not done until the player accepts"
"""What an offer's result says of it in words (the tool result's `status`, `OFFER_NOTE`, says
it as a status; these words are the ones the 1.5B development model was measured on)."""
_BOOKKEEPING: Final = (OFFERED, "facts")
"""Result fields the repeated result leaves out: the offer's id (the player picks it, the model
never names it) and a refusal's `facts` (numbers for code; its `hint` says them in words)."""
DESCRIPTION: Final = (
    "Decide what you do about what the player just said, before you answer: one of your "
    f"actions with its arguments, or {NO_ACTION!r} to only talk. The world checks it; you speak "
    "after you have seen what happened."
)


class TalkContext(Protocol):
    """Context a turn gives the model only when its decision is to only talk (see
    `TALK_CONTEXT`)."""

    def take(self, *, give: bool) -> str:
        """This turn's text, once (later calls in the turn get ""): `give` false drops it, and
        it is not counted as given."""
        ...


TALK_CONTEXT: ServiceKey[TalkContext] = ServiceKey(
    "npc.talk-context", "an encounter provides talk context only where its model runs locally"
)
"""On an encounter's agent layer where every prompt token is evaluated on this machine: the
turn's lore, given after the decision and only when it is to only talk. Before the decision
its tokens would be waited for on every turn, and on an acting turn the speech already has the
result to read; on the 1.5B development model an entry is 35-50 tokens, 1-2 s on two cores."""


class DecisionDefinitionError(ValueError):
    """The game's actions cannot be combined into one decision schema."""


@dataclass(frozen=True, slots=True)
class Decision:
    """A parsed decision: the action's tool and its parsed arguments (None: only talk)."""

    name: str
    tool: ToolDefinition[Any] | None
    arguments: Any = None


def define_decision_tool(
    actions: Sequence[ToolDefinition[Any]], name: str = DECISION_TOOL
) -> ToolDefinition[Decision]:
    """The decision tool over `actions` (the speech tool excluded)."""
    by_name = {tool.name: tool for tool in actions}
    if NO_ACTION in by_name:
        raise DecisionDefinitionError(f"a game action may not be named {NO_ACTION!r}")
    schema = _schema(actions)

    def parse(raw: str) -> Decision:
        try:
            data = parse_arguments(raw)
        except ValueError as exc:
            raise ToolArgsError(f"arguments are not a JSON object ({exc})") from None
        action = data.get("action")
        if not isinstance(action, Mapping):
            raise ToolArgsError("field 'action': give an object with 'name' (and 'arguments')")
        chosen = cast(Mapping[str, Any], action)
        action_name = chosen.get("name")
        if action_name == NO_ACTION:
            return Decision(NO_ACTION, None)
        tool = by_name.get(action_name) if isinstance(action_name, str) else None
        if tool is None:
            known = ", ".join([*by_name, NO_ACTION])
            raise ToolArgsError(f"field 'action.name': {action_name!r} is not one of {known}")
        inner = chosen.get("arguments", {})
        if not isinstance(inner, Mapping):
            raise ToolArgsError("field 'action.arguments': give an object")
        # Entities copied from an escaping chat template must not reach the world either.
        inner_args = cast(Mapping[str, Any], _decoded(inner))
        try:
            parsed = tool.parse(json.dumps(inner_args))
        except (ValidationError, ToolArgsError) as exc:
            raise ToolArgsError(f"action {tool.name!r}: {describe_invalid(exc)}") from None
        return Decision(tool.name, tool, parsed)

    async def execute(decision: Decision, run: ToolRunContext) -> dict[str, Any]:
        talk = run.ctx.maybe(TALK_CONTEXT)
        # Taken by the turn's first decision: a second one (after a refusal) acts on a turn
        # that already acted.
        talk_text = "" if talk is None else talk.take(give=decision.tool is None)
        if decision.tool is None:
            result: dict[str, Any] = {"ok": True, "action": NO_ACTION}
            if talk_text:
                run.defer_context(talk_text)
        else:
            value = await decision.tool.execute(decision.arguments, run)
            inner = (
                dict(cast(Mapping[str, Any], value))
                if isinstance(value, Mapping)
                else {"result": value}
            )
            result = {"action": decision.name, **inner}
        plan = run.ctx.maybe(TURN_PLAN)
        # Nothing happened on "none": a repeated result would only put a JSON message between
        # the player's words and the NPC's answer, and a small model answers that message.
        if plan is not None and not plan.shows_tool_results and decision.tool is not None:
            run.defer_context(OUTCOME_PREFIX + _outcome_for_model(decision.name, result))
        return result

    return define_raw_tool(name, DESCRIPTION, schema, parse, execute, concurrency_safe=False)


def _outcome_for_model(decided: str, result: Mapping[str, Any]) -> str:
    """`result` as the model reads it in a context message: in words, the action first, then
    what became of it (refused and why, offered and on what terms, or done), then any other
    fields as compact JSON; without the offer's id or a refusal's `facts`.

    These tokens stand between the decision and the NPC's first word. On the 1.5B development
    model an offer's result is 34 tokens in words (49 as the compact JSON it was, 74 whole) and
    a refusal's 30 (40): on two cores a prompt token of a small batch costs 25-50 ms."""
    rest = {key: value for key, value in result.items() if key not in _BOOKKEEPING}
    action = rest.pop("action", decided)
    ok = rest.pop("ok", None)
    reason = rest.pop("reason", None)
    hint = rest.pop("hint", None)
    offer = rest.pop("offer", None)
    pitch = rest.pop(PITCH, None)
    if offer is not None:
        rest.pop("status", None)  # the offer's note for code, said here in words
    said: list[str] = []
    if ok is False:
        why = f" ({reason})" if reason else ""
        said.append(f"refused{why}: {hint}" if hint else f"refused{why}")
    if offer is not None:
        # The NPC's own words where the game wrote them: the label is the player's ("Buy 1
        # fuel cell"), and read alone a small model speaks it as the buyer ("I'll take the fuel
        # cell"); a pitch in the third person ("offered to sell the player ...") it narrated
        # ("You offer to sell ...").
        said.append(f"offered {json.dumps(pitch or offer, ensure_ascii=False)}, {_NOT_YET}")
    elif ok is True:
        said.append("done")
    if rest:
        said.append(json.dumps(rest, ensure_ascii=False, separators=(",", ":")))
    return (f"{action}: " + "; ".join(said)) if said else str(action)


def decisions_out_of_view(
    messages: list[Message], name: str = DECISION_TOOL, *, results_repeated: bool = False
) -> list[Message]:
    """`messages` without the decisions the model need not read again (and their results):
    `messages` itself when there are none.

    A decision to only talk changes nothing, and in view it only stands between the player's
    words and the NPC's answer. Out of view, the speech request is the decision's own prompt
    with a different call opening: a server that keeps the prompt it just evaluated evaluates
    a few tokens before the first word instead of the decision call and its result (about a
    second on two cores with the 1.5B model). Every turn's such decision stays out, so the
    next turn's prompt begins with the one the server kept.

    With `results_repeated` (the server shows no tool results, so each acting decision's
    result is repeated in a context message that names the action), every decision that
    ran leaves the view too: a small model copies the calls it sees. With its earlier offers
    in view, the 1.5B development model made the same offer again on three questions about
    other things (the news, a person, the goods' quality); without them it only talked on all
    three (docs/npc-framework.md). A call that could not be read (an error result, repeated
    nowhere) stays in view."""
    errors = {m.call_id for m in messages if isinstance(m, ToolMessage) and m.is_error}

    def leaves(call: ToolCall) -> bool:
        if call.name != name:
            return False
        return _talks_only(call.arguments) or (results_repeated and call.id not in errors)

    hidden = {
        call.id
        for message in messages
        if isinstance(message, AssistantMessage) and message.tool_calls and not message.text
        and all(leaves(call) for call in message.tool_calls)
        for call in message.tool_calls
    }  # fmt: skip
    if not hidden:
        return messages
    return [
        message
        for message in messages
        if not (isinstance(message, AssistantMessage) and message.tool_calls
                and all(call.id in hidden for call in message.tool_calls))
        and not (isinstance(message, ToolMessage) and message.call_id in hidden)
    ]  # fmt: skip


def _talks_only(arguments: str) -> bool:
    try:
        data = parse_arguments(arguments)
    except ValueError:
        return False
    action = data.get("action")
    return isinstance(action, Mapping) and cast(Mapping[str, Any], action).get("name") == NO_ACTION


def _decoded(value: Any) -> Any:
    if isinstance(value, str):
        return decode_entities(value)
    if isinstance(value, Mapping):
        return {k: _decoded(v) for k, v in cast(Mapping[str, Any], value).items()}
    if isinstance(value, list):
        return [_decoded(v) for v in cast(list[Any], value)]
    return value


def _schema(actions: Sequence[ToolDefinition[Any]]) -> dict[str, Any]:
    variants: list[dict[str, Any]] = []
    definitions: dict[str, Any] = {}
    for tool in actions:
        parameters = dict(tool.schema.parameters)
        for key, value in dict(parameters.pop("$defs", {})).items():
            if key in definitions and definitions[key] != value:
                raise DecisionDefinitionError(
                    f"two actions define different schemas named {key!r}; rename one"
                )
            definitions[key] = value
        variants.append(
            {
                "type": "object",
                "description": tool.description,
                "properties": {
                    "name": {"type": "string", "enum": [tool.name]},
                    "arguments": parameters,
                },
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    variants.append(
        {
            "type": "object",
            "description": "Do nothing this time; only talk.",
            "properties": {"name": {"type": "string", "enum": [NO_ACTION]}},
            "required": ["name"],
            "additionalProperties": False,
        }
    )
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"action": {"anyOf": variants}},
        "required": ["action"],
        "additionalProperties": False,
    }
    if definitions:
        schema["$defs"] = definitions
    return schema
