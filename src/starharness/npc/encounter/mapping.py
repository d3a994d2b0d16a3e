"""The one place where session events (and action attempts) become frames for engines.

Engines never see runtime types: this module reads the session events an encounter's agent
logs and sends the frames they mean. Nothing else in the framework builds encounter frames.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from ...runtime.llm import Message
from ...runtime.session import SessionEvent
from ...runtime.session import event_types as ev
from ..actions import ActionAttempt
from ..frames import (
    ActionFrame,
    ErrorCode,
    Frame,
    FrameProtocol,
    OptionItem,
    Options,
    SayDelta,
    SayEnd,
    SceneNpc,
    ScenePlayer,
)
from ..game import SpeechContract
from ..speech import (
    ClaimRule,
    FinalSpeech,
    SpeechFields,
    SpokenOption,
    parse_arguments,
    read_speech,
)
from .claim_guard import ClaimGuard
from .entities import decode_entities, decode_speech, entity_safe_end, looks_like_arguments
from .offer_desk import OfferDesk
from .speech_stream import LineStream

_log = logging.getLogger("starharness.npc.encounter")

FALLBACK_OPTION_PREFIX: Final = "more-"
"""Ids of the game's fallback replies added to a line with too few options (`more-1`, ...)."""

FrameSink = Callable[[Frame], None]
"""Sends one frame to the encounter's connection (dropped once the encounter is closed)."""


@dataclass(frozen=True, slots=True)
class SpeechStyle:
    """How a game speaks: its speech contract, moods and the default mood."""

    contract: SpeechContract
    moods: tuple[str, ...]
    default_mood: str

    @property
    def fields(self) -> SpeechFields:
        c = self.contract
        return SpeechFields(c.line_field, c.mood_field, c.options_field, c.option_id_field,
                            c.option_label_field)  # fmt: skip


def _whole_words(option: SpokenOption, limit: int) -> SpokenOption:
    """A label the schema's length limit cut mid-word ("... It's a 4"), back to its last whole
    word with an ellipsis: a grammar-constrained model is stopped at the limit, not warned."""
    label = option.label
    if len(label) < limit or " " not in label.strip():
        return option
    whole = label[: label.rstrip().rfind(" ")].rstrip(" ,;:-")
    return SpokenOption(option.id, f"{whole}\u2026") if whole else option


def error_code_for(turn_end: ev.TurnEndData) -> ErrorCode:
    """The error code of a turn that ended with reason `error`."""
    kind = turn_end.get("kind")
    if kind == "limit":
        return ErrorCode.LIMIT
    if kind == "internal":
        return ErrorCode.INTERNAL
    return ErrorCode.LLM_UNAVAILABLE


def _error_message(code: ErrorCode, turn_end: ev.TurnEndData) -> str:
    if code is ErrorCode.LIMIT:
        return f"the turn was stopped: {turn_end.get('error', 'a bound was hit')}"
    if code is ErrorCode.INTERNAL:
        return "the turn failed inside the harness; see the server log"
    if turn_end.get("kind") == "ContextOverflowError":
        # Trying again would fail the same way: what the turn must send does not fit even
        # after the oldest exchanges were forgotten (the window is smaller than the NPC's prompt).
        return "this conversation no longer fits the model's context; close it and walk up again"
    # The cause names the provider's URL or its key's variable: it is for the operator (the
    # server log and `star-harness inspect`), never for the player.
    return "no answer comes right now; try again in a moment"


class FrameMapper:
    """Turns one encounter's session events and action attempts into frames, in order."""

    __slots__ = (
        "_calls",
        "_claims",
        "_fallback_line",
        "_fallback_options",
        "_finals",
        "_flush_handle",
        "_held",
        "_id",
        "_indices",
        "_last_spoken",
        "_line_open",
        "_max_options",
        "_names",
        "_offers",
        "_on_options",
        "_plain",
        "_plain_sent",
        "_protocol",
        "_send",
        "_speech_name",
        "_streams",
        "_style",
    )

    def __init__(
        self,
        encounter_id: str,
        protocol: FrameProtocol,
        style: SpeechStyle,
        send: FrameSink,
        on_options: Callable[[tuple[SpokenOption, ...]], None],
        fallback_line: str = "...",
        offers: OfferDesk | None = None,
        fallback_options: tuple[str, ...] = (),
    ) -> None:
        self._id = encounter_id
        self._fallback_line = fallback_line
        self._fallback_options = fallback_options
        self._protocol = protocol
        self._style = style
        self._speech_name = style.contract.tool_name
        self._max_options = style.contract.max_options
        self._send = send
        self._on_options = on_options
        # Pending offers lead every options frame; the model's own options follow.
        self._offers = offers
        self._last_spoken: tuple[SpokenOption, ...] = ()
        self._line_open = False
        # Deltas after a line's first one, held until the end of this loop step.
        self._held: list[str] = []
        self._flush_handle: asyncio.Handle | None = None
        # Per step: tool-call index -> name, index -> line stream, indices seen.
        self._names: dict[int, str] = {}
        self._streams: dict[int, LineStream] = {}
        self._indices: set[int] = set()
        # Per step, after the message: call id -> stream; call id -> completed speech.
        self._calls: dict[str, LineStream] = {}
        self._finals: dict[str, FinalSpeech] = {}
        # Plain text (a model that answers without the speech tool), streamed as it comes: what
        # this attempt wrote (left-stripped), and how much of it has been sent this step.
        self._plain = ""
        self._plain_sent = 0
        # What the turn's claims of a done deal depend on; the frames they mean are sent here.
        self._claims = ClaimGuard(style.contract.line_field)

    def guard_claims(self, rule: ClaimRule | None, *, known: bool = True) -> None:
        """Check lines against `rule` (None: do not): in a turn that committed nothing, a
        sentence claiming a done deal is never heard. `known`: the plan decides before it
        speaks, so whether the turn committed is known as the line streams; otherwise (a model
        that speaks and acts in one step) a claim, and the rest of its line, waits for the end
        of the step, when the step's actions have run."""
        self._claims.guard(rule, known=known)

    def _offered(self) -> bool:
        offers = self._offers
        return offers is not None and bool(offers.pending)

    def as_heard(self, messages: list[Message]) -> list[Message]:
        """`messages` (the model's view before a step) with each line the player heard in place
        of the one the model wrote, where claims were left out: the next turn builds on what
        was said, not on the claim. `messages` itself when there is nothing to replace."""
        return self._claims.as_heard(messages)

    def _settle_claims(self) -> None:
        """The step's actions ran: send or leave out each claim that waited, then end its line."""
        for text in self._claims.settle(self._calls):
            self._delta(text)
        for final, is_error in self._claims.released():
            self._speech_result(final, is_error)

    # -- session events ----------------------------------------------------------------------

    def on_event(self, event: SessionEvent) -> None:
        """Map one logged event; chunks are the hot path, so they are checked first."""
        kind = event.type
        if kind == ev.ASSISTANT_CHUNK:
            # Annotated rather than payload(): this runs for every streamed chunk.
            chunk: ev.ChunkData = event.data["chunk"]
            chunk_type = chunk["type"]
            if chunk_type == ev.TOOL_CALL_DELTA:
                self._tool_delta(chunk)
            elif chunk_type == ev.TEXT_DELTA and not self._indices:
                self._plain_delta(chunk.get("text", ""))
        elif kind == ev.STEP_START:
            self._plain = ""
            self._plain_sent = 0
            self._claims.step_started(self._offered())
            self._names.clear()
            self._streams.clear()
            self._indices.clear()
            self._calls.clear()
            self._finals.clear()
        elif kind == ev.LLM_RETRY:
            self._retried()
        elif kind == ev.ASSISTANT_MESSAGE:
            self._message(ev.payload(event, ev.ASSISTANT_MESSAGE))
        elif kind == ev.TOOL_CALL:
            call = ev.payload(event, ev.TOOL_CALL)
            if call["name"] == self._speech_name:
                self._speech_call(call)
        elif kind == ev.TOOL_RESULT:
            result = ev.payload(event, ev.TOOL_RESULT)
            call_id = result["call_id"]
            final = self._finals.pop(call_id, None)
            if final is not None:
                is_error = bool(result["is_error"])
                # A line whose claim the step's actions decide ends once they have.
                if not self._claims.holds(self._calls.get(call_id), final, is_error):
                    self._speech_result(final, is_error)
        elif kind == ev.STEP_END:
            self._settle_claims()
        elif kind == ev.TURN_END:
            self._turn_end(ev.payload(event, ev.TURN_END))

    def _tool_delta(self, chunk: ev.ChunkData) -> None:
        index = chunk.get("index", 0)
        self._indices.add(index)
        name = chunk.get("name")
        if name:
            self._names[index] = name
        if self._names.get(index) != self._speech_name:
            return
        delta = chunk.get("arguments_delta") or ""
        if not delta:
            return
        stream = self._streams.get(index)
        if stream is None:
            stream = self._streams[index] = self._claims.line_stream(self._offered())
        text = stream.feed(delta)
        if text:
            self._delta(text)

    def _plain_delta(self, text: str) -> None:
        plain = self._plain + text if self._plain else text.lstrip()
        self._plain = plain
        if looks_like_arguments(plain):
            # Call syntax is held back; the whole message decides what the player hears.
            return
        # Trailing spaces wait for more words (a line never ends in what it did not say), and
        # so does a character reference cut between fragments.
        ready = entity_safe_end(plain, len(plain.rstrip()))
        if ready > self._plain_sent:
            self._plain_words(decode_entities(plain[self._plain_sent : ready]))
            self._plain_sent = ready

    def _plain_words(self, text: str, message: str | None = None) -> None:
        """Send plain words, without claims where they are checked; `message`: the message's
        whole text, which they complete."""
        text = self._claims.plain(text, message)
        if text:
            self._delta(text)

    def _retried(self) -> None:
        # The next attempt streams every call again; what was sent stays sent.
        self._plain = ""
        for stream in self._streams.values():
            stream.restart()
        self._names.clear()
        self._indices.clear()

    def _message(self, data: ev.AssistantMessageData) -> None:
        if data.get("interrupted"):
            return
        calls = data["tool_calls"]
        if calls and self._plain_sent:
            # Words streamed before the model turned to a tool form a line of their own.
            self._plain_words("", data["text"])
            self._end_line(self._style.default_mood)
            self._options(())
        if calls:
            # The message lists calls in index order, as the loop assembled them.
            for index, call in zip(sorted(self._indices), calls, strict=False):
                stream = self._streams.get(index)
                if stream is not None:
                    self._calls[call["id"]] = stream
            return
        text = data["text"].strip()
        sent = self._plain_sent
        if looks_like_arguments(text):
            # Call syntax written as text (a model inventing its own format) is never read
            # aloud: the player hears the fallback line, the operator gets the error.
            self.fallback(
                self._fallback_line,
                "the model wrote its call as text instead of calling a tool; the NPC said "
                "the game's fallback line instead",
            )
            return
        if text or sent:
            # A model that answered in plain text instead of speaking is still heard.
            rest = text[sent:] if text.startswith(self._plain[:sent]) else ""
            self._plain_words(decode_entities(rest), data["text"])
            self._end_line(self._style.default_mood)
            self._options(())

    def _speech_call(self, data: ev.ToolCallEventData) -> None:
        call_id = data["call_id"]
        try:
            arguments = parse_arguments(data["arguments"])
        except ValueError:
            arguments = {}
        style = self._style
        final = decode_speech(
            read_speech(
                arguments,
                moods=style.moods,
                default_mood=style.default_mood,
                max_options=self._max_options,
                fields=style.fields,
            )
        )
        stream = self._calls.get(call_id)
        if stream is None:
            stream = self._calls[call_id] = self._claims.line_stream(self._offered())
        if stream.is_call or looks_like_arguments(final.line):
            # The speech tool refuses such a line and the model may speak again; the player
            # hears none of the call syntax (and the fallback line if it never speaks in words).
            if stream.sent:
                # Words already streamed are closed as said when the refusal comes back.
                self._finals[call_id] = final
            return
        rest = stream.remainder(final.line)
        if rest:
            stream.add(rest)
            self._delta(rest)
        self._claims.spoken(call_id, stream)
        self._finals[call_id] = final

    def _speech_result(self, final: FinalSpeech, is_error: bool) -> None:
        if is_error:
            # The model is told and may speak again; a line already begun is closed as said.
            if self._line_open:
                self._end_line(final.mood)
            return
        self._end_line(final.mood)
        self._options(final.options)

    def _turn_end(self, data: ev.TurnEndData) -> None:
        self._settle_claims()
        self._claims.turn_over()
        if self._line_open:
            self._end_line(self._style.default_mood)
        offers = self._offers
        if offers is not None and offers.dirty:
            # An offer made after the turn's last line still reaches the player this turn.
            self._options(self._last_spoken)
        if data["reason"] == "error":
            code = error_code_for(data)
            message = _error_message(code, data)
            _log.warning("encounter %s: the turn ended with %s: %s", self._id, code,
                         data.get("error", "no cause recorded"))  # fmt: skip
            self._emit(self._protocol.error(id=self._id, code=code, message=message))
        self._emit(self._protocol.encounter_idle(id=self._id))

    # -- action attempts ---------------------------------------------------------------------

    def on_attempt(self, attempt: ActionAttempt) -> None:
        """An action committed or was refused: presentation only, the world already changed."""
        if attempt.name == self._speech_name:
            return
        if attempt.ok:
            self._claims.action_committed()
        self._emit(
            self._protocol.action(
                id=self._id, name=attempt.name, ok=attempt.ok, summary=attempt.summary
            )
        )

    # -- frames ------------------------------------------------------------------------------

    def _delta(self, text: str) -> None:
        if not self._line_open:
            # A line's first words leave at once.
            self._line_open = True
            self._send(self._protocol.say_delta(id=self._id, text=text))
            return
        # Fragments that arrived together leave together: one frame (one socket write) per
        # loop step instead of one per fragment.
        self._held.append(text)
        if self._flush_handle is None:
            self._flush_handle = asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_handle = None
        if self._held:
            text = "".join(self._held)
            self._held.clear()
            self._send(self._protocol.say_delta(id=self._id, text=text))

    def _emit(self, frame: Frame) -> None:
        """Send a frame that is not a delta, after any held delta text."""
        if self._held:
            handle = self._flush_handle
            if handle is not None:
                handle.cancel()
            self._flush()
        self._send(frame)

    def _end_line(self, mood: str) -> None:
        self._line_open = False
        self._emit(self._protocol.say_end(id=self._id, mood=mood))

    def _options(self, options: tuple[SpokenOption, ...]) -> None:
        limit = self._style.contract.max_label_chars
        if limit is not None:
            options = tuple(_whole_words(option, limit) for option in options)
        self._last_spoken = options
        items = self._offers.items() if self._offers is not None else []
        if items:
            # The model's options fill what room the offers leave, without repeating one.
            taken = {item.label.casefold() for item in items} | {item.id for item in items}
            room = self._max_options - len(items)
            options = tuple(
                option
                for option in options
                if option.label.casefold() not in taken and option.id not in taken
            )[: max(0, room)]
        options = self._padded(options, items)
        items.extend(OptionItem(id=option.id, label=option.label) for option in options)
        self._emit(self._protocol.options(id=self._id, items=items))
        self._on_options(options)

    def _padded(
        self, options: tuple[SpokenOption, ...], offers: list[OptionItem]
    ) -> tuple[SpokenOption, ...]:
        """`options` with the game's fallback replies added up to the contract's minimum."""
        missing = self._style.contract.min_options - len(offers) - len(options)
        if missing <= 0 or not self._fallback_options:
            return options
        shown = [*offers, *options]
        labels = {item.label.casefold() for item in shown}
        ids = {item.id for item in shown}
        added: list[SpokenOption] = []
        for label in self._fallback_options:
            if len(added) == missing:
                break
            if label.casefold() in labels:
                continue
            number = len(added) + 1
            while f"{FALLBACK_OPTION_PREFIX}{number}" in ids:
                number += 1
            option_id = f"{FALLBACK_OPTION_PREFIX}{number}"
            ids.add(option_id)
            added.append(SpokenOption(option_id, label))
        return (*options, *added)

    def reply(self, line: str) -> None:
        """A line the framework says for the NPC without a model call (which offer?), with
        the last options again, then idle."""
        self._delta(line)
        self._end_line(self._style.default_mood)
        self._options(self._last_spoken)
        self._emit(self._protocol.encounter_idle(id=self._id))

    def fallback(self, line: str, message: str) -> None:
        """Speak the game's fallback line (closing a line begun) and tell the operator why."""
        if self._line_open:
            self._end_line(self._style.default_mood)
        self._delta(line)
        self._end_line(self._style.default_mood)
        self._options(())
        self._emit(self._protocol.error(id=self._id, code=ErrorCode.LLM_UNAVAILABLE,
                                        message=message))  # fmt: skip

    def turn_failed(self, code: ErrorCode, message: str) -> None:
        """A turn that could not start (the world failed): error, then idle."""
        self._claims.turn_over()
        self._emit(self._protocol.error(id=self._id, code=code, message=message))
        self._emit(self._protocol.encounter_idle(id=self._id))

    def opened(self, npc_name: str, attitude: int) -> None:
        """The encounter exists (sent before any model call)."""
        self._emit(
            self._protocol.encounter_opened(id=self._id, npc_name=npc_name, attitude=attitude)
        )

    def idle(self) -> None:
        """Input is welcome again (after an opening without a greeting)."""
        self._emit(self._protocol.encounter_idle(id=self._id))


class SceneFrames:
    """The frames a scene of several NPCs sends as itself to one player, beside its NPCs' own
    (each from its encounter's FrameMapper): one `encounter.opened` naming them all, one
    `encounter.idle` per round, each NPC's speaking frames marked with `speakerId`, and in a
    shared scene the other players' lines, under this player's own encounter id."""

    __slots__ = ("_id", "_protocol", "_send")

    def __init__(self, encounter_id: str, protocol: FrameProtocol, send: FrameSink) -> None:
        self._id = encounter_id
        self._protocol = protocol
        self._send = send

    def opened(self, first: SceneNpc, npcs: list[SceneNpc]) -> None:
        """The scene exists: its NPCs, and the one who holds the floor first."""
        self._send(
            self._protocol.encounter_opened(
                id=self._id,
                npc_name=first.name,
                attitude=first.attitude,
                speaker_id=first.id,
                npcs=npcs,
            )
        )

    def idle(self) -> None:
        """The round is over: the floor is the player's again."""
        self._send(self._protocol.encounter_idle(id=self._id))

    def players(self, players: list[ScenePlayer]) -> None:
        """Who is in the shared scene now (a player joined or left)."""
        self._send(self._protocol.scene_players(id=self._id, players=players))

    @staticmethod
    def spoken_by(frame: Frame, speaker_id: str) -> Frame:
        """`frame` as the scene sends it: a frame that speaks names its speaker."""
        if isinstance(frame, SayDelta | SayEnd | Options | ActionFrame):
            return frame.model_copy(update={"speaker_id": speaker_id})
        return frame

    def show(self, frame: SayDelta | SayEnd, speaker_id: str) -> None:
        """An NPC's line spoken in another player's round, shown to this player too."""
        self._send(frame.model_copy(update={"id": self._id, "speaker_id": speaker_id}))

    def player_line(self, player_id: str, name: str, text: str, mood: str) -> None:
        """Another player's line, as one `say.delta` naming them and its `say.end`."""
        protocol = self._protocol
        self._send(
            protocol.say_delta(id=self._id, text=text, speaker_id=player_id, speaker_name=name)
        )
        self._send(protocol.say_end(id=self._id, mood=mood, speaker_id=player_id))
