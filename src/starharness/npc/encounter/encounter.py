"""One encounter: a player walks up to an NPC, talks for a few turns, and walks away.

Opening checks the meeting and creates the NPC's agent on its own layer, under its archetype's
preset; each say is one turn; closing cancels a running turn, disposes the agent and tells the
game what was done.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from functools import partial
from typing import TYPE_CHECKING, Any, Final, cast

from ...runtime.kernel import Context, Next
from ...runtime.llm import NamedToolChoice, UserMessage
from ...runtime.loop import (
    AGENTS,
    AgentHandle,
    CancelCause,
    LoggedEvent,
    OutgoingRequest,
    StepPlan,
)
from ...runtime.prompt import PROMPT
from ...runtime.session import event_types as ev
from ...runtime.tools import PostExecute
from ..actions import (
    ENCOUNTER,
    OFFERED,
    ActionAttempt,
    EncounterBinding,
    Offer,
    standing_drafts,
)
from ..frames import EncounterOpen, EncounterSay, ErrorCode, FrameError
from ..game import CommittedAction
from ..lore import LORE_CONTEXT, LORE_ORDER, LoreRecall
from ..speech import SpokenOption
from ..world import NpcCard
from .conclusion import SpeechConclusion
from .decision import DECISION_TEMPERATURE, TALK_CONTEXT, decisions_out_of_view
from .host import EncounterHost
from .mapping import FrameMapper, FrameSink
from .meeting import meet
from .offer_desk import OfferDesk, acceptance_note, line_opening, offer_made, offers_meant
from .plans import DECIDE_ACT_SPEAK, PlanChoice
from .presets import ArchetypePreset
from .scene_changes import scene_changes

if TYPE_CHECKING:
    from .prefix_warmer import PrefixWarmer

MAX_PARSE_FAILURES: Final = 2
"""A call whose arguments cannot be read is retried once; the second failure ends the turn
with the game's fallback line and an `error` frame, never with raw arguments read aloud."""

_log = logging.getLogger("starharness.npc.encounter")

TRANSCRIPT_KIND: Final = "npc-encounter"
"""`meta.kind` of an encounter's session, so transcripts can be told from other sessions."""
PERSONA_SECTION: Final = "npc.persona"
PERSONA_ORDER: Final = 0
SCENE_CONTEXT: Final = "npc.scene"
SCENE_CHANGES_CONTEXT: Final = "npc.scene-changes"
"""On a local model: how the scene changed since the model first read it (`scene_changes`)."""
HEARD_CONTEXT: Final = "npc.heard"
"""In a scene of several NPCs: what this NPC heard the others say since it last spoke."""
GREETING_SOURCE: Final = "encounter"
ANSWER_SOURCE: Final = "scene"


class Encounter:
    """An open encounter; its id is the client's, scoped to one connection."""

    __slots__ = (
        "_answering",
        "_binding",
        "_calls",
        "_closed",
        "_closing",
        "_committed",
        "_conclusion",
        "_decided",
        "_decision_name",
        "_failures",
        "_give_up",
        "_greeting",
        "_handle",
        "_host",
        "_lore",
        "_mapper",
        "_offers",
        "_opening",
        "_opening_next",
        "_options",
        "_parting",
        "_plan",
        "_preset",
        "_reacting",
        "_reconsidered",
        "_running",
        "_scene",
        "_scene_first",
        "_send_frame",
        "_turn_started",
        "heard",
        "id",
        "npc",
        "player_id",
        "session_id",
    )

    def __init__(
        self, host: EncounterHost, encounter_id: str, npc: NpcCard, player_id: str, send: FrameSink
    ) -> None:
        self.id = encounter_id
        self.npc = npc
        self.player_id = player_id
        # os.urandom is what secrets.token_hex reads, without its three Python calls.
        self.session_id = f"enc-{int(time.time() * 1000)}-{os.urandom(4).hex()}"
        self._host = host
        self._calls = host.world_calls
        self._send_frame = send
        self._closed = False
        self._running = False
        self._turn_started = 0.0
        self._scene = ""
        self._scene_first: str | None = None
        """The scene as the model first read it, when only its changes are logged after it
        (`scene_changes`); None until then, and always on a provider that is not local."""
        self.heard = ""
        """What the scene this encounter is part of says this NPC heard (empty: nothing, and
        no context entry); set by the scene before each of this NPC's turns."""
        self._options: dict[str, str] = {}
        self._committed: list[CommittedAction] = []
        self._handle: AgentHandle | None = None
        self._binding: EncounterBinding | None = None
        self._closing: asyncio.Task[None] | None = None
        self._parting = False
        """An accepted offer took the player away from the NPC (`World.can_meet` turned false):
        the NPC's next line is its farewell, and the encounter closes after it."""
        self._answering = False
        """This turn answers another NPC of the scene (`answer`): speaking is forced on every
        plan, so nothing is done on another NPC's word."""
        self._reacting = False
        """The next turn only speaks, without a decision (decide-act-speak): the greeting,
        where the player has asked for nothing and nothing may be done on the NPC's own
        initiative, and the reaction to an accepted offer that committed, where the world has
        already answered (a small model otherwise acted again on its own deal, or on nothing
        at all, and the player waited for a decision that could not be needed)."""
        kit = host.kit
        # Offers leave room for at least one of the model's own options (a way out).
        self._offers = OfferDesk(max(1, kit.style.contract.max_options - 1))
        self._mapper = FrameMapper(
            encounter_id,
            kit.protocol,
            kit.style,
            self._send,
            self._remember_options,
            kit.game.fallback_line,
            self._offers,
            kit.game.fallback_options,
        )
        self._conclusion = SpeechConclusion(kit.speech_tool.name)
        self._preset = host.preset(npc.archetype)
        self._plan = self._preset.plan
        local = self._plan.local_prompts
        self._lore = LoreRecall(
            kit.game.lore,
            host.world,
            npc.id,
            local=local,
            after_decision=local and self._plan.plan == DECIDE_ACT_SPEAK,
        )
        # A claim of a deal the world did not make is never heard. The decision runs before
        # the line, so whether the turn committed is known while it streams; on the native
        # plan a claim waits for the step's actions.
        self._mapper.guard_claims(kit.game.done_claims, known=self._plan.plan == DECIDE_ACT_SPEAK)
        self._decision_name = self._preset.kit.decision_tool.name
        # Per turn: whether the decision was made, and how often a call could not be read.
        self._decided = False
        self._failures: dict[str, int] = {}
        self._give_up = False
        self._greeting: asyncio.Task[None] | None = None
        """The greeting waiting for a prefix the model server is warming (see `_greet`)."""
        self._opening: str | None = None
        """The speech call's arguments so far when this turn's line begins with the game's
        words: for the offer its decision made, or for the accepted deal it reacts to (see
        `line_opening`)."""
        self._opening_next: str | None = None
        """The opening of the next turn's line (a reaction to a deal that committed)."""
        self._reconsidered = False
        """This turn's decision was refused once and the model decided again (decide-act-
        speak): a small model picks the wrong one of two mirror-image actions (the player's
        buy for their sell), and the world's refusal (they hold none to sell) is what lets it
        see the other; one more is never taken, so a turn costs at most two decisions."""

    # -- opening -----------------------------------------------------------------------------

    @classmethod
    async def open(
        cls, host: EncounterHost, frame: EncounterOpen, send: FrameSink, *, greet: bool = True
    ) -> Encounter:
        """Check the meeting, create the agent, send `encounter.opened`; raises FrameError.
        `greet=False`: no greeting turn even in a game whose NPCs greet (a scene's others)."""
        game = host.kit.game
        greets = game.greets_first and greet
        # Only a greeting turn starts from the scene read here: every `say` reads it afresh.
        npc, attitude, scene = await host.world_calls.run(
            partial(meet, with_scene=greets),
            host.world,
            frame.id,
            frame.npc_id,
            frame.player_id,
        )
        encounter = cls(host, frame.id, npc, frame.player_id, send)
        encounter._scene = scene or ""
        await encounter._create_agent()
        try:
            await encounter._stand()
            low, high = game.attitude_range
            encounter._mapper.opened(npc.name, min(max(attitude, low), high))
            if greets:
                encounter._reacting = True
                encounter._greet(UserMessage(game.greeting_prompt, source=GREETING_SOURCE))
            else:
                encounter._mapper.idle()
        except BaseException:
            await encounter.close()
            raise
        return encounter

    async def _create_agent(self) -> None:
        host = self._host
        preset = self._preset
        binding = self._binding = EncounterBinding(
            host.world,
            self.npc.id,
            self.player_id,
            self._on_attempt,
            calls=self._calls,
            propose=self._offers.propose,
            committed=self._stand,
        )

        def setup(layer: Context) -> None:
            # Only what is this encounter's own: the archetype's layer below has the rest.
            prompt = layer.get(PROMPT)
            prompt.section(PERSONA_SECTION, PERSONA_ORDER, self.npc.persona)
            prompt.context(SCENE_CONTEXT, 0, self._scene_text)
            if self._plan.local_prompts:
                prompt.context(SCENE_CHANGES_CONTEXT, 0.25, self._scene_changes)
            prompt.context(HEARD_CONTEXT, 0.5, lambda _ctx: self.heard)
            layer.provide(ENCOUNTER, binding)
            if self._lore.after_decision:
                layer.provide(TALK_CONTEXT, self._lore)
            else:
                prompt.context(LORE_CONTEXT, LORE_ORDER, self._lore.context)

        _log.info(
            "encounter %s with %s (%s): turn plan %s (%s)",
            self.id,
            self.npc.id,
            preset.kit.name or "default archetype",
            self._plan.plan,
            self._plan.reason,
        )
        preset.join(self.session_id, self)
        try:
            self._handle = await host.ctx.get(AGENTS).create(
                self.session_id,
                setup=setup,
                options=host.agent_options,
                meta=self._meta(),
                parent=preset.layer,
            )
        except BaseException:
            preset.leave(self.session_id)
            raise

    @property
    def preset(self) -> ArchetypePreset:
        """The archetype's shared layer this encounter's agent runs on."""
        return self._preset

    @property
    def plan(self) -> PlanChoice:
        """The turn plan this encounter runs, and why."""
        return self._plan

    async def shape_request(
        self, outgoing: OutgoingRequest, next_: Next[OutgoingRequest]
    ) -> OutgoingRequest | None:
        """Force the plan's call for this step, or stop a turn whose calls cannot be read."""
        if self._give_up:
            self._give_up = False
            self._mapper.fallback(
                self._host.kit.game.fallback_line,
                "the model's answer could not be read twice in a row; the NPC said the "
                "game's fallback line instead",
            )
            return None
        kit = self._host.kit
        request = outgoing.request
        if self._plan.plan == DECIDE_ACT_SPEAK:
            forced = kit.speech_tool.name if self._decided else self._decision_name
            # After an offer the line begins with the game's words for it: the server streams
            # them at once, and the player reads the terms while the model reads the result.
            begun = self._opening if forced != self._decision_name else None
            request.tool_choice = NamedToolChoice(forced, begun or "")
            if forced == self._decision_name and request.temperature is None:
                request.temperature = DECISION_TEMPERATURE
        elif self._answering:
            request.tool_choice = NamedToolChoice(kit.speech_tool.name)
        else:
            # A server that cannot stream an open tool choice may force speaking instead:
            # speaking is always a valid NPC step, and streaming it keeps first words fast.
            request.forcible_tool = kit.speech_tool.name
        return await next_(outgoing)

    def _track_call(self, name: str, is_error: bool, content: str) -> None:
        """Advance the plan on a call's result; count calls whose arguments were unreadable."""
        speech, decision = self._host.kit.speech_tool.name, self._decision_name
        if name not in (speech, decision):
            return
        if not is_error:
            if name == decision:
                offer = offer_made(content, self._offers.pending)
                self._opening = None if offer is None else self._line_opening(offer.terms.says)
                if not self._reconsidered and _refused(content):
                    self._reconsidered = True
                else:
                    self._decided = True
            return
        failures = self._failures[name] = self._failures.get(name, 0) + 1
        if failures < MAX_PARSE_FAILURES:
            return
        if name == decision:
            # No readable decision: the NPC only talks this turn (it saw why).
            self._decided = True
        else:
            self._give_up = True

    def _meta(self) -> dict[str, Any]:
        return {
            "kind": TRANSCRIPT_KIND,
            "plan": self._plan.plan,
            "plan_reason": self._plan.reason,
            "game": self._host.kit.game.name,
            "archetype": self.npc.archetype,
            "encounter": self.id,
            "npc": self.npc.id,
            "npc_name": self.npc.name,
            "player": self.player_id,
        }

    # -- turns -------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether a turn runs (from the say until `encounter.idle`)."""
        return self._running

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def has_session(self) -> bool:
        """Whether the agent (and so a session log) was created."""
        return self._handle is not None

    @property
    def committed(self) -> tuple[CommittedAction, ...]:
        """Actions that committed during this encounter, in order."""
        return tuple(self._committed)

    @property
    def offers(self) -> tuple[Offer, ...]:
        """The offers the player may still accept, oldest first."""
        return self._offers.pending

    async def say(self, frame: EncounterSay) -> None:
        """Start the next turn with the player's words or pick; raises FrameError (busy,
        bad_option). Picking an offer, plainly accepting the only one, or restating one's terms
        commits it first."""
        if self._closed:
            raise FrameError(ErrorCode.UNKNOWN_ENCOUNTER, "the encounter is closed", self.id)
        if self._running:
            raise FrameError(ErrorCode.BUSY, "a turn is running; wait for encounter.idle", self.id)
        content = frame.text
        if frame.option_id is not None:
            offer = self._offers.take(frame.option_id)
            if offer is not None:
                await self._accept(offer)
                return
            content = self._options.get(frame.option_id)
            if content is None:
                raise self._bad_option(frame.option_id)
        assert content is not None  # the frame model guarantees text or optionId
        meant = offers_meant(content, self._offers.pending, self._host.kit.game.accepts)
        if len(meant) > 1:
            # Two deals fit a bare "deal" (or the words restated): ask, never guess.
            self._mapper.reply(self._host.kit.game.which_offer_line)
            return
        if meant:
            offer = self._offers.take(meant[0].id)
            assert offer is not None
            await self._accept(offer)
            return
        self._running = True
        await self._lore.read(self._calls, content)
        if await self._read_scene():
            await self._stand()
            self._begin(UserMessage(content))

    async def answer(self, line: str) -> None:
        """A turn that only speaks, answering `line` (another NPC of the scene spoke to this
        one): nothing is decided or done on it, as after a greeting. Raises FrameError(busy)."""
        if self._closed or self._running:
            raise FrameError(ErrorCode.BUSY, "the NPC is busy or gone", self.id)
        self._running = True
        if await self._read_scene():
            self._reacting = self._answering = True
            self._begin(UserMessage(line, source=ANSWER_SOURCE))

    def _bad_option(self, option_id: str) -> FrameError:
        if self._offers.was_settled(option_id):
            return FrameError(
                ErrorCode.BAD_OPTION,
                f"offer {option_id!r} is no longer open: it was accepted already, or it was "
                "withdrawn for newer ones",
                self.id,
            )
        offered = ", ".join(map(repr, [*(o.id for o in self._offers.pending), *self._options]))
        return FrameError(
            ErrorCode.BAD_OPTION,
            f"option {option_id!r} is not in the last options frame (offered: {offered or 'none'})",
            self.id,
        )

    async def _read_scene(self) -> bool:
        """Read the scene for the turn about to start; False (turn ended) when it failed."""
        try:
            self._scene = await self._calls.run(self._host.world.scene, self.npc.id, self.player_id)
        except Exception:
            _log.exception("encounter %s: the world could not render the scene", self.id)
            self._running = False
            self._mapper.turn_failed(ErrorCode.INTERNAL, "the world could not render the scene")
            return False
        return not self._closed

    async def _stand(self) -> None:
        """Hold the game's standing deals as the world allows them now (`Game.standing_offers`);
        a world that cannot say leaves the pending ones as they were."""
        standing = self._host.kit.game.standing_offers
        binding = self._binding
        if standing is None or binding is None or not self.player_id:
            return
        try:
            drafts = await self._calls.run(standing_drafts, binding, standing)
        except Exception:
            _log.exception("encounter %s: the game's standing offers could not be read", self.id)
            return
        self._offers.stand(drafts)

    async def _accept(self, offer: Offer) -> None:
        """Commit an accepted offer (guards again, one transaction), show it, then let the NPC
        react: the `action` frame goes out before any model call."""
        self._running = True
        try:
            attempt: ActionAttempt = await self._calls.run(offer.draft.settle, offer.id)
        except Exception:
            _log.exception("encounter %s: settling offer %s failed", self.id, offer.id)
            self._running = False
            self._mapper.turn_failed(
                ErrorCode.INTERNAL, "the deal could not be settled; nothing changed"
            )
            return
        # Whatever else was offered was priced on the world before this deal.
        self._offers.withdraw_all()
        self._on_attempt(attempt)
        if attempt.ok:
            world = self._host.world
            self._parting = not await self._calls.run(world.can_meet, self.npc.id, self.player_id)
        if await self._read_scene():
            await self._stand()
            self._reacting = attempt.ok
            if attempt.ok:
                self._opening_next = self._line_opening(offer.terms.says_done)
            self._begin(UserMessage(acceptance_note(offer, attempt)))

    def _line_opening(self, words: str) -> str | None:
        """The begun speech call for a line that opens with the game's `words`, where the plan
        lets a line begin so (see `PlanChoice.opens_lines`)."""
        if not self._plan.opens_lines or self._plan.plan != DECIDE_ACT_SPEAK:
            return None
        return line_opening(words, self._host.kit.style.contract)

    def _greet(self, message: UserMessage) -> None:
        """Begin the greeting; after a prefix the model server is warming, if one is."""
        warmer = self._host.prefix_warmer
        if not warmer.in_flight:
            self._begin(message)
            return
        self._running = True
        self._greeting = asyncio.get_running_loop().create_task(
            self._greet_after_warming(warmer, message), name=f"greeting {self.id}"
        )

    async def _greet_after_warming(self, warmer: PrefixWarmer, message: UserMessage) -> None:
        await warmer.yield_to_player()
        if not self._closed:
            self._begin(message)

    def _begin(self, message: UserMessage) -> None:
        handle = self._handle
        assert handle is not None
        self._running = True
        self._turn_started = time.perf_counter()
        handle.agent.followup(message)

    def _scene_text(self, ctx: Context) -> str:
        if not self._plan.local_prompts:
            return self._scene
        if self._scene_first is None and self._scene:
            self._scene_first = self._scene
        return self._scene_first or ""

    def _scene_changes(self, ctx: Context) -> str:
        first = self._scene_first
        return "" if first is None else scene_changes(first, self._scene)

    def _remember_options(self, options: tuple[SpokenOption, ...]) -> None:
        self._options = {option.id: option.label for option in options}

    # -- what the agent does -----------------------------------------------------------------

    async def post_execute(
        self, value: PostExecute, next_: Next[PostExecute]
    ) -> PostExecute | None:
        """Called by the preset for this encounter's calls: speaking may end the turn."""
        return await self._conclusion.post_execute(value, next_)

    async def pre_step(self, plan: StepPlan, next_: Next[StepPlan]) -> StepPlan | None:
        """Called by the preset before each step: the view holds the lines the player heard,
        and no decision the model need not read again."""
        messages = self._mapper.as_heard(plan.messages)
        if self._plan.plan == DECIDE_ACT_SPEAK:
            messages = decisions_out_of_view(
                messages,
                self._decision_name,
                results_repeated=not self._plan.shows_tool_results,
            )
        plan.messages = messages
        return await next_(plan)

    def on_logged(self, logged: LoggedEvent) -> None:
        event = logged.event
        kind = event.type
        if kind == ev.TURN_START:
            self._offers.new_turn()
            self._decided, self._reacting = self._reacting, False
            self._failures.clear()
            self._give_up = False
            self._reconsidered = False
            self._opening, self._opening_next = self._opening_next, None
        elif kind == ev.TOOL_RESULT:
            result = ev.payload(event, ev.TOOL_RESULT)
            self._track_call(result["name"], bool(result["is_error"]), result["content"])
        elif kind == ev.TURN_END:
            self._running = False
            self._answering = False
            reason = ev.payload(event, ev.TURN_END)["reason"]
            self._host.turn_done(time.perf_counter() - self._turn_started, reason)
        elif kind == ev.ASSISTANT_MESSAGE:
            usage = ev.payload(event, ev.ASSISTANT_MESSAGE).get("usage")
            if usage is not None:
                self._host.usage(usage)
        self._conclusion.on_event(event)
        self._mapper.on_event(event)
        if kind == ev.TURN_END and self._parting:
            # The player left with the deal (a passage, say): after the NPC's farewell and
            # `encounter.idle`, the encounter is over; a later say hears `unknown_encounter`.
            self._start_closing()

    def _on_attempt(self, attempt: ActionAttempt) -> None:
        self._mapper.on_attempt(attempt)
        if attempt.ok and attempt.name != self._host.kit.speech_tool.name:
            self._committed.append(
                CommittedAction(attempt.name, dict(attempt.arguments), attempt.summary)
            )
            self._host.push_hud(self.player_id)

    def _send(self, frame: Any) -> None:
        if not self._closed:
            self._send_frame(frame)

    # -- closing -----------------------------------------------------------------------------

    async def close(self) -> None:
        """Cancel a running turn, dispose the agent and tell the game; safe to call twice."""
        # Shielded: whoever waits may be cancelled, the agent is still disposed.
        await asyncio.shield(self._start_closing())

    def _start_closing(self) -> asyncio.Task[None]:
        """The one shut-down task (started on the first call): nothing is sent after it."""
        if self._closing is None:
            self._closed = True
            self._closing = asyncio.get_running_loop().create_task(
                self._shut_down(), name=f"close encounter {self.id}"
            )
        return self._closing

    async def _shut_down(self) -> None:
        greeting, self._greeting = self._greeting, None
        if greeting is not None:
            greeting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await greeting
        handle = self._handle
        if handle is not None:
            handle.agent.cancel(CancelCause("user", "the encounter was closed"))
            try:
                await handle.dispose()
            except Exception:
                _log.exception("encounter %s: disposing the agent failed", self.id)
            finally:
                self._preset.leave(self.session_id)
        end = self._host.kit.game.on_encounter_end
        if end is not None:
            try:
                await self._calls.run(
                    end,
                    self._host.world,
                    self.npc,
                    self.player_id,
                    tuple(self._committed),
                )
            except Exception:
                _log.exception("encounter %s: the game's on_encounter_end failed", self.id)
        self._host.encounter_ended(self)


def _refused(content: str) -> bool:
    """Whether a decision's logged result is the world's refusal of the chosen action."""
    try:
        result = json.loads(content)
    except ValueError:
        return False
    if not isinstance(result, dict):
        return False
    fields = cast(dict[str, Any], result)
    # A refusal that came with the rules' counter-offer needs no second decision.
    return fields.get("ok") is False and OFFERED not in fields
