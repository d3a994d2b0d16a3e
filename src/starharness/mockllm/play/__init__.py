"""Playing one step onto a connection."""

from ...responder.steps import (
    ConnectionReset,
    EmptyBody,
    MalformedEvent,
    MalformedJson,
    MaxTokens,
    ReasoningSuccess,
    SlowSuccess,
    Stall,
    Step,
    StreamDisconnect,
    Success,
    ToolCalls,
    WrongContentType,
)
from .answers import play_answer
from .errors import play_error
from .exchange import Exchange
from .faults import play_fault

__all__ = ["Exchange", "play"]


async def play(exchange: Exchange, step: Step) -> None:
    """Answer the exchange's request the way `step` says."""
    if isinstance(step, Success | SlowSuccess | MaxTokens | ReasoningSuccess | ToolCalls):
        await play_answer(exchange, step)
    elif isinstance(
        step,
        Stall
        | ConnectionReset
        | StreamDisconnect
        | EmptyBody
        | MalformedJson
        | MalformedEvent
        | WrongContentType,
    ):
        await play_fault(exchange, step)
    else:
        await play_error(exchange, step)
