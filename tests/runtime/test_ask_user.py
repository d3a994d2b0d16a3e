"""ask_user: the agent's question reaches the attached front end, or fails clearly."""

from __future__ import annotations

import json

from starharness.runtime.ask_user import NO_ANSWER, USER_QUESTIONS, AskUserPlugin, Question
from starharness.runtime.kernel import Context, NoConfig
from starharness.runtime.llm.types import ToolCall
from starharness.runtime.tools import TOOLS, ToolOutcome, ToolsConfig, ToolsPlugin


async def _root() -> Context:
    root = Context()
    await ToolsPlugin().setup(root.fork("tools"), ToolsConfig())
    await AskUserPlugin().setup(root.fork("ask"), NoConfig())
    return root


async def _ask(agent: Context, **arguments: object) -> ToolOutcome:
    call = ToolCall("q1", "ask_user", json.dumps(arguments))
    [outcome] = await agent.get(TOOLS).execute_calls([call], session_id="s-1")
    return outcome


async def test_the_answer_comes_back_to_the_model() -> None:
    root = await _root()
    asked: list[Question] = []

    async def answer(question: Question) -> str | None:
        asked.append(question)
        return "  the blue one "

    root.get(USER_QUESTIONS).attach(answer)
    outcome = await _ask(root.child("agent"), question="Which door?", options=["red", "blue"])
    assert outcome.content == "The user answered: the blue one"
    assert asked == [Question("Which door?", ("red", "blue"), "s-1", "q1")]


async def test_no_one_to_ask_or_a_dismissed_question_is_a_clear_failure() -> None:
    root = await _root()
    agent = root.child("agent")
    nobody = await _ask(agent, question="Which door?")
    assert nobody.error_code == NO_ANSWER
    assert nobody.content.startswith("Error: no answer: no one is here to answer")

    async def dismiss(question: Question) -> str | None:
        return None

    detach = root.get(USER_QUESTIONS).attach(dismiss)
    assert (await _ask(agent, question="Which door?")).error_code == NO_ANSWER
    detach()
    assert not root.get(USER_QUESTIONS).attached


async def test_an_empty_question_is_refused_before_anyone_is_asked() -> None:
    root = await _root()
    outcome = await _ask(root.child("agent"), question="")
    assert outcome.error_code == "invalid_args"
