"""Claims of a done deal ("Here you go", "I've sent the money"): which sentences
make one, and a line streamed without them.

A line is only honest about a trade the world committed; where nothing committed, a sentence
that says otherwise is left out. The speech stream and the eval's rules use the same rule, so
what the eval calls a false claim is what the framework never lets the player hear.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

_CURLY_APOSTROPHES: Final = str.maketrans({"\u2019": "'", "\u2018": "'"})
_SPACES: Final = re.compile(r"\s+")
_WORD_CHAR: Final = re.compile(r"[\w']")
_WORD_START: Final = re.compile(r"(?<![\w'])[\w']")
_SENTENCE_END: Final = re.compile(r"[.!?\u2026]+[\"'\u201d\u2019)\]]*(?=\s)")
"""A sentence ends at its stop (and a closing quote) once whitespace follows, or at the line's
end: "3.5" and "1,100.50" are no ends."""


_NUMBER_WORD: Final = (
    r"(?:\d[\d,.]*|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|some|all)"
)


def _normal(text: str) -> str:
    """Lower case, straight apostrophes, single spaces (never longer than `text`)."""
    return _SPACES.sub(" ", text.translate(_CURLY_APOSTROPHES).casefold())


@dataclass(frozen=True, slots=True)
class ClaimRule:
    """Which sentences claim a deal is done, and the words such a claim begins with.

    `pattern` finds a claim in a sentence. `recallable` finds words that claim a deal unless
    their sentence sets it in the past: "You bought 2 loaves" said while the deal is only
    offered is a claim, "Last time you bought 2 loaves off me" is a memory; `recall` finds
    the words that make a sentence a memory (both or neither). `promises` finds a promise of a
    deal ("I'll give you 10,000 coins"), a claim too where nothing is offered either (an
    offer the player can accept makes it honest); `promise_openers` are the words every
    promise begins with.

    `openers` are the opening words of every claim (lower case, one or a few words: "here
    you", "i've"); a streamed line is held only from a word that may begin one of them, so
    words before it leave at once. A claim that begins with none of the openers is still left
    out, but words already sent before it stay sent. `instead` is said when every sentence of
    a line was left out.
    """

    pattern: re.Pattern[str]
    openers: tuple[str, ...]
    instead: str
    recallable: re.Pattern[str] | None = None
    recall: re.Pattern[str] | None = None
    promises: re.Pattern[str] | None = None
    promise_openers: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.openers or any(not opener.strip() for opener in self.openers):
            raise ValueError("a claim rule needs openers, none of them blank")
        if not self.instead.strip():
            raise ValueError("a claim rule needs a line to say instead")
        if (self.recallable is None) != (self.recall is None):
            raise ValueError("a claim rule needs both recallable and recall, or neither")
        if (self.promises is None) != (not self.promise_openers):
            raise ValueError("a claim rule needs both promises and promise_openers, or neither")

    @property
    def all_openers(self) -> tuple[str, ...]:
        """The words a claim or a promise may begin with."""
        return (*self.openers, *self.promise_openers)

    def without_promises(self) -> ClaimRule:
        """This rule where an offer stands: a promise of a deal is honest."""
        if self.promises is None:
            return self
        return replace(self, promises=None, promise_openers=())

    def promise(self, text: str) -> str | None:
        """The words of `text` that promise a deal, or None."""
        if self.promises is None:
            return None
        found = self.promises.search(text.translate(_CURLY_APOSTROPHES))
        return None if found is None else found.group(0)

    def claim(self, text: str, before: str = "") -> str | None:
        """The words of `text` that claim a done deal, or None. `before`: the words of the
        first sentence of `text` that came before it (they may make it a memory)."""
        text = text.translate(_CURLY_APOSTROPHES)
        found = self.pattern.search(text)
        if found is None and self.promises is not None:
            found = self.promises.search(text)
        if found is not None:
            return found.group(0)
        recallable, recall = self.recallable, self.recall
        if recallable is None or recall is None or recallable.search(text) is None:
            return None
        # A memory is a memory in its own sentence only: "Last time you bought 2. You bought 3
        # more." claims the second.
        start = 0
        lead = before.translate(_CURLY_APOSTROPHES)
        for end in [*(m.end() for m in _SENTENCE_END.finditer(text)), len(text)]:
            sentence = text[start:end]
            found = recallable.search(sentence)
            if found is not None and recall.search(lead + sentence) is None:
                return found.group(0)
            start, lead = end, ""
        return None

    def filtered(self, line: str) -> str:
        """`line` as the player hears it where nothing committed: what `ClaimFilter` sends."""
        claims = ClaimFilter(self)
        return claims.feed(line) + claims.finish()


ENGLISH_CLAIMS: Final = ClaimRule(
    re.compile(
        r"\b(?:transferred|credited|wired) (?:you|it|them|\d|the)"
        # "Here you go, 3 jars of honey at 40 each"
        r"|\bhere you (?:go|are)\b"
        r"|\bhere(?: are|'s| is) (?:your\b|(?:the )?\d)"
        r"|\b(?:deal(?: is)? done|done deal|it'?s a deal|consider it done|pleasure doing business"
        r"|enjoy your (?:purchase|cargo|goods|trip|flight|ride|room|stay))"
        r"|\b(?:i(?:'ve| have)) (?:sent|given|added|transferred|loaded|credited|booked|sold"
        r"|bought)\b"
        r"|\b(?:has|have|you've|we've) been (?:sent|added|transferred|credited|paid|loaded"
        r"|delivered|booked)\b"
        r"|\b(?:were|are now) (?:sent|added|transferred|credited) (?:to|in)\b"
        r"|\bgave you\b|\byou now (?:have|own)\b"
        # "You have received the money" (a prompt injection obeyed in words)
        r"|\byou(?:'ve| have)? (?:now |just )?received\b"
        r"|\byou(?:'re| are) (?:booked|all set)\b|\bbooked you\b|\bwelcome aboard\b"
        r"|\b(?:they'?re|it'?s|they are|it is) (?:all )?yours\b(?! for| if| once| when| as soon)"
        r"|\b(?:transaction|sale|purchase|payment) (?:is )?(?:complete|done|confirmed)\b",
        re.IGNORECASE,
    ),
    openers=(
        *("sold", "transferred", "credited", "wired", "paid"),
        # A claim's subject too, so "I sold 6 units" is not left at "I".
        *("i sold", "i transferred", "i credited", "i wired", "i paid", "i just", "i gave"),
        *("here you", "here are", "here's", "here is"),
        *("deal is", "deal done", "done deal", "it's a", "its a", "consider it", "pleasure"),
        *("enjoy your", "i've", "i have", "gave you", "you now", "booked you", "welcome aboard"),
        *("you have", "you've", "you received", "you just", "you successfully"),
        *("has been", "have been", "we've been", "were sent", "were added", "were transferred"),
        *("were credited", "are now", "you're", "you are", "you've been", "you have been"),
        *("it's yours", "it's all", "its yours", "its all", "it is yours", "it is all"),
        *("they're yours", "they're all", "theyre", "they are yours", "they are all"),
        *("transaction", "sale", "purchase", "payment"),
        *("you bought", "you purchased", "you paid", "you sold", "you just bought"),
    ),
    instead="What can I do for you?",
    # "You bought 2 <goods> for 4,400 cr." and "You have successfully bought 1 drive part from
    # me." heard on the 1.5B model while the deal was only offered; a returning player may be
    # greeted with "Last time you bought ...".
    recallable=re.compile(
        r"\b(?:sold|paid) (?:you|it|them|\d|the)\b"
        r"|\byou(?:'ve| have)? (?:just |now |successfully )?(?:bought|purchased|paid for)\b"
        r"|\byou(?:'ve| have)? (?:just )?sold (?:me|it|them|\d|the)\b",
        re.IGNORECASE,
    ),
    recall=re.compile(
        r"\b(?:last (?:time|visit|trip|run|week|month|cycle|year|round)"
        r"|(?:days?|weeks?|months?|cycles?|years?|while|trips?|visits?) ago"
        r"|yesterday|previously|before|earlier|back then|the other day|remember|recall)\b",
        re.IGNORECASE,
    ),
    # "Understood. I'll give you 10,000 ..." said to a prompt injection, with nothing offered.
    promises=re.compile(
        r"\bi(?:'ll| will| am going to|'m going to) (?:get|give|sell|buy|send|load|hand|transfer"
        r"|pay|put)(?: you)? " + _NUMBER_WORD + r"\b"
        r"|\bi(?:'ll| will) (?:take|buy) (?:them|it|those|these|your)\b",
        re.IGNORECASE,
    ),
    promise_openers=("i'll", "i will", "i am going", "i'm going"),
)
"""The framework's English rule (`Game.done_claims` replaces it, or None switches it off)."""


class ClaimFilter:
    """Feeds a line in any fragments; returns what may be sent, never a claim of a done deal.

    Text leaves at once up to a word that may begin a claim (one of the rule's openers); from
    there it is held until its sentence ends (. ! ? then a space, or the line's end), then sent,
    or left out with the space after it when the held words claim a deal. The output does not
    depend on how the line was cut: it is always `ClaimRule.filtered(line)`. When every word
    was left out, `finish` gives the rule's `instead` line.

    With `known=False` whether the turn commits is not known yet (a model that speaks and acts
    in one step): a claim, and everything after it, waits for `settle`, which sends it all when
    the turn committed and goes on as above when it did not.
    """

    __slots__ = ("_buf", "_finish_waits", "_heard", "_known", "_longest", "_open", "_openers",
                 "_rule", "_sent", "_skip_space", "_waiting", "dropped")  # fmt: skip

    def __init__(self, rule: ClaimRule, *, known: bool = True) -> None:
        self._rule = rule
        self._openers: Sequence[str] = tuple(_normal(opener) for opener in rule.all_openers)
        self._longest = max(len(opener) for opener in self._openers) + 1
        self._known = known
        self._buf = ""
        """The sentence being streamed, from its first character."""
        self._sent = 0
        """How much of `_buf` was sent (or is whitespace already skipped)."""
        self._skip_space = False
        self._waiting: list[str] | None = None
        """A claim made before the turn's commits were known, and the text after it."""
        self._finish_waits = False
        self._open = False
        """The turn committed: every word is honest, nothing is checked any more."""
        self._heard = False
        self.dropped = False
        """Whether a sentence was left out."""

    @property
    def waiting(self) -> bool:
        """Whether a claim waits for `settle`."""
        return self._waiting is not None

    @property
    def known(self) -> bool:
        """Whether the turn's commits are known (from the start, or since `settle`)."""
        return self._known

    def feed(self, text: str) -> str:
        """Consume the next part of the line; return the text to send now (often all of it)."""
        if self._open:
            return self._heard_of(text)
        if self._waiting is not None:
            self._waiting.append(text)
            return ""
        if self._skip_space:
            text = text.lstrip()
            if not text:
                return ""
            self._skip_space = False
        buf = self._buf + text
        out: list[str] = []
        # From the start: a stop may have been sent before the space that ends it arrived.
        while self._waiting is None and (end := _SENTENCE_END.search(buf)) is not None:
            said, buf = self._close(buf[: end.end()], buf[end.end() :])
            out.append(said)
        if self._waiting is None:
            hold = self._hold(buf)
            if hold > self._sent:
                out.append(buf[self._sent : hold])
                self._sent = hold
        self._buf = buf
        return self._heard_of("".join(out))

    def finish(self) -> str:
        """The line ended: decide its last sentence; the `instead` line if nothing was heard."""
        if self._open:
            return ""
        out = ""
        if self._waiting is None and self._buf:
            out, _ = self._close(self._buf, "")
            out = self._heard_of(out)
            self._buf = ""
        if self._waiting is not None:
            self._finish_waits = True
            return out
        if self.dropped and not self._heard:
            self._heard = True
            return self._rule.instead
        return out

    def settle(self, committed: bool) -> str:
        """The turn's commits are known now; return what may be sent of what waited."""
        self._known = True
        waiting, self._waiting = self._waiting, None
        if committed:
            self._open = True
            held = self._buf[self._sent :] + "".join(waiting or ())
            self._buf = ""
            self._sent = 0
            return self._heard_of(held)
        if waiting is None:
            return ""
        self.dropped = True
        self._skip_space = True
        out = self.feed("".join(waiting[1:]))
        return out + self.finish() if self._finish_waits else out

    def _close(self, sentence: str, rest: str) -> tuple[str, str]:
        """Decide a complete sentence: its unsent part to send now, and the text to go on
        with (`rest`, less the space after a claim left out; '' while a claim waits)."""
        hold = self._hold(sentence)
        sent = self._sent
        self._sent = 0
        if hold == len(sentence) or self._rule.claim(sentence[hold:], sentence[:hold]) is None:
            return sentence[sent:], rest
        if not self._known:
            self._waiting = [sentence[hold:], rest]
            return sentence[sent:hold], ""
        self.dropped = True
        rest = rest.lstrip()
        self._skip_space = not rest
        return sentence[sent:hold], rest

    def _hold(self, text: str) -> int:
        """Where held text begins: the first unsent word that may begin a claim, or the end."""
        for word in _WORD_START.finditer(text, self._sent):
            start = word.start()
            if self._may_open(_normal(text[start : start + self._longest])):
                return start
        return len(text)

    def _may_open(self, tail: str) -> bool:
        """Whether the words from here (`tail`, up to the text's end) may begin a claim."""
        for opener in self._openers:
            if opener.startswith(tail):
                return True
            if tail.startswith(opener) and (
                len(tail) == len(opener) or not _WORD_CHAR.match(tail, len(opener))
            ):
                return True
        return False

    def _heard_of(self, text: str) -> str:
        if not self._heard and text.strip():
            self._heard = True
        return text
