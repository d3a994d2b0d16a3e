"""`define_game_action`: validated, guarded, transactional, audited game actions as tools."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, Generic

from pydantic import BaseModel, ValidationError, create_model
from typing_extensions import TypeVar

from ...runtime.errors import StarHarnessError
from ...runtime.tools import ToolArgsError, ToolDefinition, ToolRunContext, define_tool
from ..world import AuditRecord
from .binding import ENCOUNTER, ActionAttempt, EncounterBinding, Role
from .guards import Guard
from .offers import (
    ACCEPTED_OFFER,
    OFFER_CHANGED,
    OfferDraft,
    OfferTerms,
    Terms,
)
from .refusal import CounterOffer, Refusal, StandingOffer

_log = logging.getLogger("starharness.npc.actions")

A = TypeVar("A", bound=BaseModel)
Tx = TypeVar("Tx", default=Any)
"""The game's transaction type (what its world's `transaction()` yields)."""
_Args = TypeVar("_Args", bound=BaseModel, default=BaseModel)

Apply = Callable[[Tx, _Args], Mapping[str, Any] | None]
"""`apply(tx, args)`: the writes, inside the transaction; returns the effect (JSON-able)."""
Narrate = Callable[[A, Mapping[str, Any]], str]
"""`narrate(args, effect)`: one line for the `action` frame and the model."""
Complete = Callable[[Tx, _Args], _Args]
"""`complete(tx, args)`: the arguments with what the model may leave out filled in from the
world (a price it did not name: the going one), inside the transaction, before the guards."""

OFFER_SENTENCE: Final = (
    " It takes from the player, so calling it makes an offer: nothing changes until they accept it."
)
"""Appended to the description of an action that takes from the player."""


class ActionDefinitionError(StarHarnessError, ValueError):
    """A game action was declared wrongly."""


@dataclass(frozen=True, slots=True, eq=False)
class GameAction(Generic[A, Tx]):
    """A game action; `tool` is one shared runtime tool whose schema omits bound parameters."""

    name: str
    parameters: type[A]
    bind: Mapping[str, Role]
    actor_field: str | None
    guards: tuple[Guard[A], ...]
    apply: Apply[Tx, A]
    narrate: Narrate[A]
    tool: ToolDefinition[Any]
    takes_from: Role | None = None
    """The party the action takes from; `Role.PLAYER` makes a model's call an offer."""
    terms: Terms[Tx, A] | None = None
    complete: Complete[Tx, A] | None = None

    @property
    def needs_consent(self) -> bool:
        """Whether it commits only when the player accepts it (it takes from the player)."""
        return self.takes_from is Role.PLAYER


def define_game_action(
    name: str,
    description: str,
    parameters: type[A],
    *,
    apply: Apply[Tx, A],
    narrate: Narrate[A],
    bind: Mapping[str, Role] | None = None,
    actor: str | None = None,
    guards: Sequence[Guard[A]] = (),
    takes_from: Role | None = None,
    terms: Terms[Tx, A] | None = None,
    complete: Complete[Tx, A] | None = None,
) -> GameAction[A, Tx]:
    """Declare an action.

    `bind` maps parameter fields to encounter roles; the model never sees them and cannot
    override them. `actor` names the field of the acting party (default: the field bound to the
    NPC); a dead actor cannot act.

    `takes_from=Role.PLAYER` declares that the action takes money, goods or anything else
    from the player: a model's call then runs the guards and becomes an offer, labelled by
    `terms(tx, args)`, that commits only when the player accepts it. Actions that take nothing
    from the player commit on the model's call.

    `complete(tx, args)` fills in what the model may leave out (give such a field a default
    the game reads as "not said"), from the world, before the guards: the guards, the offer's
    frozen arguments and the audit row all see the completed arguments. A small model that
    need not name a price cannot name a wrong one.
    """
    if takes_from is Role.PLAYER and terms is None:
        raise ActionDefinitionError(
            f"action {name!r} takes from the player: give terms=... (the offer's label, cost "
            "and quote the player accepts)"
        )
    if terms is not None and takes_from is not Role.PLAYER:
        raise ActionDefinitionError(
            f"action {name!r}: terms are for actions that take from the player "
            "(takes_from=Role.PLAYER)"
        )
    if takes_from is Role.PLAYER:
        description = description.rstrip() + OFFER_SENTENCE
    bound = dict(bind or {})
    fields = parameters.model_fields
    for field in bound:
        if field not in fields:
            raise ActionDefinitionError(
                f"action {name!r}: bound field {field!r} is not a parameter"
            )
    if actor is None:
        actor = next((f for f, role in bound.items() if role is Role.NPC), None)
    elif actor not in fields:
        raise ActionDefinitionError(f"action {name!r}: actor field {actor!r} is not a parameter")
    public = _public_model(name, parameters, bound)
    holder: list[GameAction[A, Tx]] = []

    async def execute(args: BaseModel, run: ToolRunContext) -> dict[str, Any]:
        return await _run(holder[0], args, run)

    tool = define_tool(name, description, public, execute)
    action = GameAction(
        name=name,
        parameters=parameters,
        bind=bound,
        actor_field=actor,
        guards=tuple(guards),
        apply=apply,
        narrate=narrate,
        tool=tool,
        takes_from=takes_from,
        terms=terms,
        complete=complete,
    )
    holder.append(action)
    return action


def _public_model(name: str, model: type[BaseModel], bound: Mapping[str, Role]) -> type[BaseModel]:
    if not bound:
        return model
    keep: dict[str, Any] = {
        field: (info.annotation, info)
        for field, info in model.model_fields.items()
        if field not in bound
    }
    public: type[BaseModel] = create_model(  # pyright: ignore[reportCallIssue, reportUnknownVariableType]
        f"{model.__name__}Public",
        __doc__=model.__doc__,
        __config__=model.model_config,
        **keep,
    )
    return public


async def _run(action: GameAction[Any], public: BaseModel, run: ToolRunContext) -> dict[str, Any]:
    binding = run.ctx.get(ENCOUNTER)
    if action.needs_consent:
        return await _offer(action, binding, public)
    if binding.calls.inline:
        result, outcome = _attempt(action, binding, public)
    else:
        # The world blocks (SQLite): the whole transaction runs in one worker thread.
        attempt = binding.calls.thread(_attempt, action, binding, public)
        try:
            result, outcome = await asyncio.shield(attempt)
        except asyncio.CancelledError:
            # The thread cannot be stopped; once it has committed, the commit must still be
            # reported.
            result, outcome = await attempt
            binding.report(outcome)
            raise
    binding.report(outcome)
    if outcome.ok and binding.committed is not None:
        await binding.committed()
    return result


def _bound_values(
    action: GameAction[Any], binding: EncounterBinding, public: BaseModel
) -> dict[str, Any]:
    """The model's arguments with the bound roles filled in from the encounter."""
    values = public.model_dump()
    for field, role in action.bind.items():
        values[field] = binding.role(role)
    return values


def _parsed(action: GameAction[Any], values: dict[str, Any]) -> tuple[BaseModel, str | None]:
    """The full arguments, validated, and the acting party's id (None: no actor field)."""
    args = action.parameters.model_validate(values)
    return args, getattr(args, action.actor_field) if action.actor_field else None


def _attempt(
    action: GameAction[Any], binding: EncounterBinding, public: BaseModel
) -> tuple[dict[str, Any], ActionAttempt]:
    said = _bound_values(action, binding, public)
    parsed, actor = _parsed(action, said)
    world = binding.world

    def attempt(tx: Any) -> tuple[dict[str, Any], ActionAttempt]:
        # The whole action is one unit a world may run again after a conflict: completion,
        # actor check, guards, apply and audit row all see the same transaction.
        args, values = _completed(action, tx, parsed, said)
        refusal = _check(action, world, tx, args, actor)
        if refusal is not None:
            world.audit(tx, _record(action, binding, actor, values, False, refusal.reason, None))
            result = refusal.as_result()
            # Two voices: the model reads the hint in `result`, the player sees `shown`.
            return result, ActionAttempt(action.name, False, refusal.shown, values, result)
        effect = dict(action.apply(tx, args) or {})
        summary = action.narrate(args, effect)
        world.audit(tx, _record(action, binding, actor, values, True, None, summary))
        result = {"ok": True, "summary": summary, **effect}
        return result, ActionAttempt(action.name, True, summary, values, result)

    try:
        result, outcome = world.run_action(attempt)
    except Exception as exc:
        # The transaction rolled back; the failed attempt is still audited, then the runtime
        # turns the exception into a tool error the model reads.
        try:
            world.audit(None, _record(action, binding, actor, said, False, f"error: {exc}", None))
        except Exception:
            _log.exception("could not audit the failed action %s", action.name)
        raise
    return result, outcome


async def _offer(
    action: GameAction[Any], binding: EncounterBinding, public: BaseModel
) -> dict[str, Any]:
    """A call that takes from the player: guards now, the commit only on the player's pick."""
    propose = binding.propose
    if propose is None or not binding.player_id:
        refusal = Refusal(
            "needs_player",
            "this takes from the player, and no player is here to accept it",
            {"action": action.name},
            "There is no one here to agree to that.",
        )
        result = refusal.as_result()
        arguments = public.model_dump()
        binding.report(ActionAttempt(action.name, False, refusal.shown, arguments, result))
        return result
    refused, draft, counter = await _drafted(action, binding, public)
    if draft is not None:
        offer = propose(draft)
        return {"ok": True, **offer.made()}
    assert refused is not None
    if counter is not None:
        # The rules' own deal in the refused call's place; a counter refused in turn is not
        # followed further, but for one case below.
        countered, counter_draft, further = await _drafted(counter.action, binding, counter.public)
        if (
            counter_draft is None
            and countered is not None
            and further is not None
            and further.action is counter.action
            and counter.action is not action
            and not counter.explained
        ):
            # The model misread the player (their buy for their sell), and what they meant is
            # refused in turn (ten units, and they can pay for four): the rules' deal of what
            # they meant, shown with that refusal, the one the player's own request met.
            _, fits, _ = await _drafted(further.action, binding, further.public)
            if fits is not None:
                offer = propose(fits)
                binding.report(countered)
                return {**countered.result, **offer.made()}
        if counter_draft is not None:
            offer = propose(counter_draft)
            made = offer.made()
            if counter.action is action or counter.explained:
                # Fewer units, another price, or the way to what was refused: the refusal's
                # card and hint say why.
                binding.report(refused)
                return {**refused.result, **made}
            # Another action: the model misread the player (their buy for their sell). The
            # player never asked for the refused call, and the model reads the deal it meant,
            # not a refusal it would read aloud; the refusal stays in the audit.
            return {"ok": True, "action": counter.action.name, **made}
        _log.info("the counter-offer to %s was refused too: %s", action.name, countered)
    binding.report(refused)
    return refused.result


StandingOffers = Callable[[Any, str, str], Sequence[StandingOffer]]
"""`standing(tx, npc_id, player_id)`: the deals the game holds open between this NPC and this
player (read inside a transaction; each is offered only while its guards pass)."""


def standing_drafts(binding: EncounterBinding, standing: StandingOffers) -> list[OfferDraft]:
    """The game's standing deals whose guards pass now, as drafts (blocking: run it where the
    world's calls run). A deal refused is left out without an audit row: nobody asked for it,
    so nothing was refused."""
    world = binding.world

    def attempt(tx: Any) -> list[OfferDraft]:
        drafts: list[OfferDraft] = []
        for deal in standing(tx, binding.npc_id, binding.player_id):
            action = deal.action
            public = _standing_call(deal)
            said = _bound_values(action, binding, public)
            parsed, actor = _parsed(action, said)
            args, values = _completed(action, tx, parsed, said)
            if _check(action, world, tx, args, actor) is not None:
                continue
            terms_of = action.terms
            assert terms_of is not None  # _standing_call checked it takes from the player
            terms = terms_of(tx, args)
            settle = partial(_settle, action, binding, values, terms)
            drafts.append(OfferDraft(action.name, values, terms, settle))
        return drafts

    return world.run_action(attempt)


def _standing_call(deal: StandingOffer) -> BaseModel:
    action = deal.action
    if not action.needs_consent:
        raise ActionDefinitionError(
            f"a standing offer of {action.name!r}, which takes nothing from the player: only "
            "an action the player accepts can stand"
        )
    try:
        return action.tool.parse(json.dumps(dict(deal.arguments)))
    except (ValidationError, ToolArgsError) as exc:
        raise ActionDefinitionError(
            f"a standing offer of {action.name!r} with arguments it does not take: {exc}"
        ) from None


@dataclass(frozen=True, slots=True)
class _Counter:
    """A refusal's counter-offer, its arguments parsed as the model's call would be."""

    action: GameAction[Any]
    public: BaseModel
    explained: bool


async def _drafted(
    action: GameAction[Any], binding: EncounterBinding, public: BaseModel
) -> tuple[ActionAttempt | None, OfferDraft | None, _Counter | None]:
    if binding.calls.inline:
        return _draft(action, binding, public)
    # Read-only unless refused (the refusal is audited): cancelling waits for the thread.
    return await asyncio.shield(binding.calls.thread(_draft, action, binding, public))


def _draft(
    action: GameAction[Any], binding: EncounterBinding, public: BaseModel
) -> tuple[ActionAttempt | None, OfferDraft | None, _Counter | None]:
    """The guards, in a transaction that writes only a refusal's audit row; then the terms."""
    said = _bound_values(action, binding, public)
    parsed, actor = _parsed(action, said)
    world = binding.world
    terms_of = action.terms
    assert terms_of is not None  # define_game_action requires terms with takes_from

    def attempt(tx: Any) -> tuple[ActionAttempt | None, OfferDraft | None, CounterOffer | None]:
        # The offer freezes the completed arguments: a price filled in now is the price.
        args, values = _completed(action, tx, parsed, said)
        refusal = _check(action, world, tx, args, actor)
        if refusal is not None:
            world.audit(tx, _record(action, binding, actor, values, False, refusal.reason, None))
            refused = ActionAttempt(action.name, False, refusal.shown, values, refusal.as_result())
            return refused, None, refusal.instead
        terms = terms_of(tx, args)
        settle = partial(_settle, action, binding, values, terms)
        return None, OfferDraft(action.name, values, terms, settle), None

    refused, draft, instead = world.run_action(attempt)
    # Checked after the refusal's audit row committed: a game's wrong counter is its error.
    return refused, draft, _counter(action, instead)


def _counter(refused: GameAction[Any], counter: CounterOffer | None) -> _Counter | None:
    """The counter-offer's call, parsed and checked like the model's own."""
    if counter is None:
        return None
    if not counter.action.needs_consent:
        raise ActionDefinitionError(
            f"a guard of {refused.name!r} counter-offered {counter.action.name!r}, which takes "
            "nothing from the player: only an action the player accepts can be counter-offered"
        )
    try:
        public = counter.action.tool.parse(json.dumps(dict(counter.arguments)))
    except (ValidationError, ToolArgsError) as exc:
        raise ActionDefinitionError(
            f"a guard of {refused.name!r} counter-offered {counter.action.name!r} with "
            f"arguments it does not take: {exc}"
        ) from None
    return _Counter(counter.action, public, counter.explained)


def _settle(
    action: GameAction[Any],
    binding: EncounterBinding,
    values: dict[str, Any],
    offered: OfferTerms,
    offer_id: str,
) -> ActionAttempt:
    """Commit an accepted offer: the guards again and the quote unchanged, then apply, once."""
    args, actor = _parsed(action, values)
    world = binding.world
    audited = {**values, ACCEPTED_OFFER: offer_id}
    terms_of = action.terms
    assert terms_of is not None

    def attempt(tx: Any) -> ActionAttempt:
        refusal = _check(action, world, tx, args, actor)
        if refusal is None:
            refusal = _moved(action.name, offered, terms_of(tx, args))
        if refusal is not None:
            world.audit(tx, _record(action, binding, actor, audited, False, refusal.reason, None))
            return ActionAttempt(action.name, False, refusal.shown, values, refusal.as_result())
        effect = dict(action.apply(tx, args) or {})
        summary = action.narrate(args, effect)
        world.audit(tx, _record(action, binding, actor, audited, True, None, summary))
        return ActionAttempt(
            action.name, True, summary, values, {"ok": True, "summary": summary, **effect}
        )

    try:
        return world.run_action(attempt)
    except Exception as exc:
        try:
            failed = _record(action, binding, actor, audited, False, f"error: {exc}", None)
            world.audit(None, failed)
        except Exception:
            _log.exception("could not audit the failed offer %s", action.name)
        raise


def _completed(
    action: GameAction[Any], tx: Any, args: BaseModel, said: dict[str, Any]
) -> tuple[BaseModel, dict[str, Any]]:
    """The arguments the action runs on, and their values, after the game's completion."""
    if action.complete is None:
        return args, said
    completed = action.complete(tx, args)
    return completed, completed.model_dump()


def _moved(action: str, offered: OfferTerms, now: OfferTerms) -> Refusal | None:
    """A refusal naming each quoted value that moved since the offer, or None."""
    then = offered.quote
    keys = sorted({*then, *now.quote})
    changed = {key: [then.get(key), now.quote.get(key)] for key in keys}
    changed = {key: pair for key, pair in changed.items() if pair[0] != pair[1]}
    if not changed:
        return None
    moved = ", ".join(f"{key} {old} -> {new}" for key, (old, new) in changed.items())
    label = f"{offered.label} ({offered.cost})" if offered.cost else offered.label
    return Refusal(
        OFFER_CHANGED,
        f"the terms changed since you offered {label} ({moved}); offer again if you still "
        "want the deal",
        {"action": action, "changed": changed},
        "The deal no longer stands: the terms changed.",
    )


def _check(
    action: GameAction[Any], world: Any, tx: Any, args: BaseModel, actor: str | None
) -> Refusal | None:
    if actor is not None and not world.is_alive(tx, actor):
        return Refusal(
            "actor_dead",
            f"{actor} is dead and cannot act",
            {"actor": actor},
            "They cannot do anything any more.",
        )
    for guard in action.guards:
        refusal = guard(tx, args)
        if refusal is not None:
            return refusal
    return None


def _record(
    action: GameAction[Any],
    binding: EncounterBinding,
    actor: str | None,
    values: dict[str, Any],
    ok: bool,
    reason: str | None,
    summary: str | None,
) -> AuditRecord:
    return AuditRecord(
        action=action.name,
        actor_id=actor or binding.npc_id,
        # A resident's actions have no player on the other side.
        target_id=binding.player_id or None,
        arguments=values,
        ok=ok,
        reason=reason,
        summary=summary,
    )
