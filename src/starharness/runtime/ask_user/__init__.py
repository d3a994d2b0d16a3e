"""runtime/ask_user: an agent asks the person a question and waits for the answer."""

from .plugin import NO_ANSWER, AskUserParams, AskUserPlugin
from .service import USER_QUESTIONS, Answerer, Question, UserQuestions

__all__ = [
    "NO_ANSWER",
    "USER_QUESTIONS",
    "Answerer",
    "AskUserParams",
    "AskUserPlugin",
    "Question",
    "UserQuestions",
]
