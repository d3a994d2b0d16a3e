"""One encounter's guard against claims of a deal the world did not make: what it decides by
and what it leaves behind for the model's view.

The frames stay `FrameMapper`'s; this holds the turn's side of the decision (the rule, whether
the turn committed, speech results waiting for the step's end) and the lines the player heard
in place of the ones the model wrote.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace

from ...runtime.llm import AssistantMessage, Message, ToolCall
from ..speech import ClaimFilter, ClaimRule, FinalSpeech, parse_arguments, with_line
from .speech_stream import LineStream


def _heard_call(call: ToolCall, heard: str | None, field: str) -> ToolCall:
    """`call` with `heard` as its line (`call` itself when there is none or it cannot be read).

    The heard line is spliced into the arguments as the model wrote them, so a local server's
    prompt cache still matches the message up to the line; only text that cannot be read that
    way is written out again whole.
    """
    if heard is None:
        return call
    spliced = with_line(call.arguments, heard, field)
    if spliced is not None:
        return replace(call, arguments=spliced)
    try:
        arguments = parse_arguments(call.arguments)
    except ValueError:
        return call
    arguments[field] = heard
    return replace(call, arguments=json.dumps(arguments, ensure_ascii=False))


class ClaimGuard:
    """Where a turn committed nothing, no sentence claiming a done deal is heard: the rule,
    whether the turn committed, the plain words checked this step, speech results waiting for
    the step's actions, and each line heard in place of the one the model wrote."""

    __slots__ = ("_committed", "_deferred", "_heard", "_known", "_line_field", "_plain",
                 "_plain_heard", "_rule", "_rule_offered")  # fmt: skip

    def __init__(self, line_field: str) -> None:
        self._line_field = line_field
        # Set by `guard`: the rule for lines of turns that committed nothing.
        self._rule: ClaimRule | None = None
        self._rule_offered: ClaimRule | None = None
        self._known = True
        self._committed = False
        # This step's plain words checked for claims, and what of them was sent.
        self._plain: ClaimFilter | None = None
        self._plain_heard: list[str] = []
        # Speech results waiting behind a claim whose honesty the step's end decides.
        self._deferred: list[tuple[FinalSpeech, bool]] = []
        # Call id (or a plain message's text) -> the line the player heard, where it is not
        # the line the model wrote.
        self._heard: dict[str, str] = {}

    def guard(self, rule: ClaimRule | None, *, known: bool = True) -> None:
        """Check lines against `rule` (None: do not); `known`: whether the turn's commits are
        known as its lines stream (see `FrameMapper.guard_claims`)."""
        self._rule = rule
        self._known = known
        # A promise of a deal is honest beside an offer; where the line streams before the
        # step's actions ran (not known), it may be promising the offer the same step makes.
        self._rule_offered = None if rule is None else rule.without_promises()
        if not known and rule is not None:
            self._rule = self._rule_offered

    def _checked(self, offered: bool) -> ClaimRule | None:
        # A commit in this turn (a decision's, or the accepted offer's before the reaction)
        # makes a claim honest; an offer standing makes a promise honest.
        if self._committed:
            return None
        return self._rule_offered if offered else self._rule

    def action_committed(self) -> None:
        """An action of this turn committed: its claims are honest from here on."""
        self._committed = True

    def turn_over(self) -> None:
        """The turn ended (or never started): the next one has committed nothing yet."""
        self._committed = False

    def line_stream(self, offered: bool = False) -> LineStream:
        """A stream for a speaking call's line, checked where the turn committed nothing;
        `offered`: an offer stands for the player to accept."""
        return LineStream(self._line_field, self._checked(offered), known=self._known)

    def step_started(self, offered: bool = False) -> None:
        """A model step begins: its plain words are checked afresh."""
        rule = self._checked(offered)
        self._plain = None if rule is None else ClaimFilter(rule)
        self._plain_heard.clear()

    def plain(self, text: str, message: str | None = None) -> str:
        """What of plain words may be sent; `message`: the message's whole text, which they
        complete (a claim left out of it is recorded as heard)."""
        claims = self._plain
        if claims is None:
            return text
        text = claims.feed(text) if text else ""
        if message is not None:
            text += claims.finish()
            if claims.dropped:
                self._heard[message] = "".join((*self._plain_heard, text)).strip()
        self._plain_heard.append(text)
        return text

    def spoken(self, call_id: str, stream: LineStream) -> None:
        """A speaking call's line is complete: where a claim was left out, the model's own
        history must hold what the player heard."""
        if stream.left_out:
            self._heard[call_id] = stream.sent.strip()

    def holds(self, stream: LineStream | None, final: FinalSpeech, is_error: bool) -> bool:
        """Whether a speech result waits for the step's end (its line's claim is undecided,
        or a result before it waits); a held result comes back from `settle`."""
        if self._deferred or (stream is not None and stream.waiting):
            self._deferred.append((final, is_error))
            return True
        return False

    def settle(self, calls: Mapping[str, LineStream]) -> list[str]:
        """The step's actions ran: the text each waiting claim's line sends now, in order."""
        committed = self._committed
        texts: list[str] = []
        for call_id, stream in calls.items():
            if not stream.unsettled:
                continue
            text = stream.settle(committed)
            if text:
                texts.append(text)
            self.spoken(call_id, stream)
        return texts

    def released(self) -> list[tuple[FinalSpeech, bool]]:
        """The speech results that waited for the step's end (once `settle` sent their
        lines), in order, each with whether it was an error."""
        deferred, self._deferred = self._deferred, []
        return deferred

    def as_heard(self, messages: list[Message]) -> list[Message]:
        """`messages` with each line the player heard in place of the one the model wrote
        (see `FrameMapper.as_heard`); `messages` itself when there is nothing to replace."""
        heard = self._heard
        if not heard:
            return messages
        field = self._line_field
        out = list(messages)
        for index in range(len(out) - 1, -1, -1):
            message = out[index]
            if not isinstance(message, AssistantMessage):
                continue
            if message.text and message.text in heard:
                message = replace(message, text=heard.pop(message.text))
            if any(call.id in heard for call in message.tool_calls):
                calls = tuple(_heard_call(call, heard.pop(call.id, None), field)
                              for call in message.tool_calls)  # fmt: skip
                message = replace(message, tool_calls=calls)
            out[index] = message
            if not heard:
                break
        # A line no longer in view (compacted away) needs no correction.
        heard.clear()
        return out
