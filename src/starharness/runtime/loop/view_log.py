"""Model-visible implies logged: a listener's rewrite of the messages becomes a view/rewrite
event before it is sent, and the request about to go out is checked against the one the log
rebuilds. Both read a session alone, so the agent logs what they return."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Final

from ..llm.types import LlmRequest, Message
from ..session import (
    SURFACE,
    Projection,
    Session,
    UnloggedViewError,
    ViewRewriteData,
    message_to_data,
    replace_op,
)
from .options import VerifyMode

VERIFY_ENV: Final = "STAR_HARNESS_VERIFY_VIEW"
"""Overrides the agents' `verify_view` (tests and CI set it to `rebuild`)."""


def verify_override() -> VerifyMode | None:
    """`STAR_HARNESS_VERIFY_VIEW`, when it names a mode; read once per agent manager, since a
    lookup of an unset variable raises and catches a KeyError (a few us on every agent)."""
    value = os.environ.get(VERIFY_ENV)
    if value in ("off", "projection", "rebuild"):
        return value  # pyright: ignore[reportReturnType]
    return None


def _same(a: Message, b: Message) -> bool:
    return a is b or a == b


def view_rewrite(
    session: Session, after: Sequence[Message], *, by: str, turn: int, step: int
) -> ViewRewriteData | None:
    """The one view/rewrite event that makes the session's view equal `after`, or None when
    they are the same already."""
    before = session.messages()
    keys = session.view_keys()
    n, m = len(before), len(after)
    low = 0
    while low < n and low < m and _same(before[low], after[low]):
        low += 1
    if low == n == m:
        return None
    high = n  # before[high:] equals after[m - (n - high):]
    while high > low and m - (n - high) > low and _same(before[high - 1], after[m - n + high - 1]):
        high -= 1
    data = ViewRewriteData(by=by, turn=turn, step=step)
    if low == high and low == n:
        data[SURFACE] = "append"
        data["messages"] = [message_to_data(msg) for msg in after[low:]]
        return data
    if low == high:
        # A pure insertion: replace the message after it with (insertion, that message).
        high += 1
    # A replace names its span by keys; messages that share a key go together.
    while low > 0 and keys[low - 1] == keys[low]:
        low -= 1
    while high < n and keys[high] == keys[high - 1]:
        high += 1
    data[SURFACE] = replace_op(keys[low], keys[high - 1])
    data["messages"] = [message_to_data(msg) for msg in after[low : m - (n - high)]]
    return data


def verify_request(session: Session, request: LlmRequest, mode: VerifyMode) -> None:
    """Raise UnloggedViewError when `request` is not what the session's log rebuilds."""
    if mode == "off":
        return
    sent = request.messages
    projected = session.messages()
    if sent is not projected:
        _compare(session, sent, projected, "the session's projection")
    header = session.header()
    if header is None or header["system"] != request.system:
        raise UnloggedViewError(
            f"session {session.id!r}: the system prompt about to be sent is not the logged one"
        )
    if mode != "rebuild":
        return
    rebuilt = Projection().feed(session.events)
    _compare(session, sent, rebuilt, "the messages rebuilt from the whole log")
    names = [tool["name"] for tool in header["tools"]]
    if names != [tool.name for tool in request.tools]:
        raise UnloggedViewError(
            f"session {session.id!r}: the tools about to be sent are not the logged ones"
        )


def _compare(
    session: Session, sent: Sequence[Message], logged: Sequence[Message], what: str
) -> None:
    if len(sent) == len(logged) and all(_same(a, b) for a, b in zip(sent, logged, strict=True)):
        return
    index = next(
        (i for i, (a, b) in enumerate(zip(sent, logged, strict=False)) if not _same(a, b)),
        min(len(sent), len(logged)),
    )
    raise UnloggedViewError(
        f"session {session.id!r}: the request about to be sent has {len(sent)} messages,"
        f" {what} {len(logged)}; they differ first at message {index}: something made the"
        " request model-visible without logging it"
    )
