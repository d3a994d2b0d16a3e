"""Per-conversation scripts: binding, the next-new-conversation queue, and completeness."""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..responder.steps import Step

DEFAULT_CONVERSATION = "default"
"""Where requests without an `X-Star-Harness-Session` header go."""

SERVING_KEEP_CONVERSATIONS = 2_000
"""What the long-running mocks (the offline brain, `star-harness mock-llm`) keep: twice the
1,000 open encounters an NPC server is sized for, so a conversation in use is not forgotten."""


@dataclass(slots=True)
class _Script:
    steps: list[Step]
    repeat_last: bool
    played: int = 0

    @property
    def complete(self) -> bool:
        return self.played >= len(self.steps)

    def take(self) -> Step | None:
        if self.played < len(self.steps):
            step = self.steps[self.played]
            self.played += 1
            return step
        if self.repeat_last and self.steps:
            return self.steps[-1]
        return None


@dataclass(slots=True)
class Conversation:
    """One conversation's state: its script (if any), turn count and last prompt."""

    key: str
    script: _Script | None = None
    turns: int = 0
    last_prompt: str = ""


@dataclass(frozen=True, slots=True)
class Exhausted:
    """No step left for a conversation; `message` names it."""

    code: str
    message: str


@dataclass(slots=True)
class ConversationBook:
    """Routes each conversation to its own script; nothing is shared between conversations."""

    repeat_last: bool = False
    keep: int | None = None
    """How many conversations met without a bound script are kept (least recently used go
    first); None keeps them all."""
    _conversations: dict[str, Conversation] = field(default_factory=dict[str, Conversation])
    # Conversations that `bind` did not name, oldest use first: the ones `keep` may forget.
    _unnamed: OrderedDict[str, None] = field(default_factory=OrderedDict[str, None])
    _queued: deque[_Script] = field(default_factory=deque[_Script])
    _each: _Script | None = None

    def bind(self, key: str, steps: Iterable[Step], repeat_last: bool | None = None) -> None:
        """Give conversation `key` these steps (appended when it already has a script)."""
        self._unnamed.pop(key, None)  # a named conversation is never forgotten
        conversation = self._conversations.setdefault(key, Conversation(key))
        if conversation.script is None:
            conversation.script = self._script(steps, repeat_last)
            return
        conversation.script.steps.extend(steps)
        if repeat_last is not None:
            conversation.script.repeat_last = repeat_last

    def queue_next(self, steps: Iterable[Step], repeat_last: bool | None = None) -> None:
        """Queue a script for the next conversation that has not been seen yet."""
        self._queued.append(self._script(steps, repeat_last))

    def set_each(self, steps: Iterable[Step], repeat_last: bool | None = None) -> None:
        """Give every conversation that gets no other script its own copy of these steps."""
        self._each = self._script(steps, repeat_last)

    def conversation(self, key: str) -> Conversation:
        """The conversation for `key`; a new one claims the oldest queued script or a copy."""
        conversation = self._conversations.get(key)
        if conversation is None:
            conversation = Conversation(key)
            self._conversations[key] = conversation
            if self._queued:
                conversation.script = self._queued.popleft()
            elif self._each is not None:
                conversation.script = _Script(list(self._each.steps), self._each.repeat_last)
            self._unnamed[key] = None
            self._forget_oldest()
        elif key in self._unnamed:
            self._unnamed.move_to_end(key)
        return conversation

    def __len__(self) -> int:
        """How many conversations are kept."""
        return len(self._conversations)

    def _forget_oldest(self) -> None:
        # A long-running mock (the offline brain, `star-harness mock-llm`) meets a new
        # conversation per encounter; without a bound their last prompts pile up forever.
        while self.keep is not None and len(self._unnamed) > self.keep:
            key, _ = self._unnamed.popitem(last=False)
            del self._conversations[key]

    def take(self, conversation: Conversation) -> Step | Exhausted | None:
        """The next step; None means no script (a responder may answer)."""
        script = conversation.script
        if script is None:
            return None
        step = script.take()
        if step is not None:
            return step
        return Exhausted(
            code="mock_script_exhausted",
            message=(
                f"mock LLM script for conversation {conversation.key!r} is exhausted: all "
                f"{len(script.steps)} steps were played (add steps, or set repeat_last)"
            ),
        )

    def incomplete(self) -> list[str]:
        """A line per script with steps never played."""
        lines = [
            f"conversation {conversation.key!r}: played {conversation.script.played} of "
            f"{len(conversation.script.steps)} steps"
            for conversation in self._conversations.values()
            if conversation.script is not None and not conversation.script.complete
        ]
        lines.extend(
            f"next-new-conversation script #{number} ({len(script.steps)} steps) was never claimed"
            for number, script in enumerate(self._queued, start=1)
            if script.steps
        )
        return lines

    def _script(self, steps: Iterable[Step], repeat_last: bool | None) -> _Script:
        return _Script(list(steps), self.repeat_last if repeat_last is None else repeat_last)
