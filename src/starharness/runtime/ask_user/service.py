"""USER_QUESTIONS: lets a tool ask the person a question through whatever front end is attached."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..kernel import Disposer, ServiceKey, once


@dataclass(frozen=True, slots=True)
class Question:
    """What the model asks; `options` are suggested answers (the person may answer freely)."""

    text: str
    options: tuple[str, ...] = ()
    session_id: str = ""
    call_id: str = ""


Answerer = Callable[[Question], Awaitable[str | None]]
"""Shows a question to a person; returns the answer, or None when they dismiss it."""


class UserQuestions:
    """One question at a time to the attached front end (the `chat` terminal, a web UI)."""

    def __init__(self) -> None:
        self._answer: Answerer | None = None
        self._lock = asyncio.Lock()

    def attach(self, answer: Answerer) -> Disposer:
        """Use `answer` to reach the person until the returned disposer runs."""
        self._answer = answer

        def detach() -> None:
            if self._answer is answer:
                self._answer = None

        return once(detach)

    @property
    def attached(self) -> bool:
        return self._answer is not None

    async def ask(self, question: Question) -> str | None:
        """The person's answer; None when no one is attached or they dismissed the question."""
        async with self._lock:
            answer = self._answer
            if answer is None:
                return None
            return await answer(question)


USER_QUESTIONS: ServiceKey[UserQuestions] = ServiceKey(
    "user-questions", "add a row with plugin starharness.runtime.ask_user:AskUserPlugin"
)
