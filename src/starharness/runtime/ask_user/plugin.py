"""AskUserPlugin: the `ask_user` tool, so an agent can ask the person a question mid-task."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..kernel import Context, NoConfig, Plugin
from ..tools import TOOLS, ToolFailure, define_tool
from ..tools.run import ToolRunContext
from .service import USER_QUESTIONS, Question, UserQuestions

NO_ANSWER = "no_answer"
"""Failure code when no one answered (no front end attached, or the question was dismissed)."""


class AskUserParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    question: str = Field(min_length=1, max_length=4000, description="One clear question.")
    options: list[str] = Field(
        default=[], max_length=10, description="Suggested answers the person may pick from."
    )


class AskUserPlugin(Plugin[NoConfig]):
    """Provides USER_QUESTIONS and registers `ask_user`."""

    inject = (TOOLS,)
    provides = (USER_QUESTIONS,)

    async def setup(self, ctx: Context, config: NoConfig) -> None:
        questions = UserQuestions()
        ctx.provide(USER_QUESTIONS, questions)

        async def ask_user(args: AskUserParams, run: ToolRunContext) -> str | ToolFailure:
            question = Question(args.question, tuple(args.options), run.session_id, run.call_id)
            answer = await questions.ask(question)
            if answer is None or not answer.strip():
                return ToolFailure(
                    "no answer: no one is here to answer, or the question was dismissed; "
                    "carry on with your best judgement and say what you assumed",
                    NO_ANSWER,
                )
            return f"The user answered: {answer.strip()}"

        ctx.get(TOOLS).register(
            define_tool(
                "ask_user",
                "Ask the user a question and wait for the answer, when you cannot go on "
                "without their decision (not for things you can find out yourself).",
                AskUserParams,
                ask_user,
                timeout_s=3600,
            )
        )
