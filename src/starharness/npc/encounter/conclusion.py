"""When speaking ends the turn: after the step's actions ran, and only if none was refused."""

from __future__ import annotations

from collections.abc import Mapping

from ...runtime.kernel import Next
from ...runtime.session import SessionEvent
from ...runtime.session import event_types as ev
from ...runtime.tools import PostExecute, ToolResult, ToolSuccess


def _went_well(result: ToolResult) -> bool:
    if not isinstance(result, ToolSuccess):
        return False
    value = result.value
    # Refusals are values: `{ok: false, ...}` is a normal result the model must react to.
    return not (isinstance(value, Mapping) and value.get("ok") is False)  # pyright: ignore[reportUnknownMemberType]


class SpeechConclusion:
    """Concludes a turn whose step spoke and whose every other call went through.

    The speaking call itself never ends the turn: the decision waits for the last call of
    the step, so actions run first and a refused or failed one keeps the turn open (the
    model then reads the refusal and answers it). A talk-only step costs one request.
    """

    __slots__ = ("_calls", "_fine", "_speech_name", "_spoke")

    def __init__(self, speech_name: str) -> None:
        self._speech_name = speech_name
        self._calls: list[str] = []
        self._fine: dict[str, bool] = {}
        self._spoke = False

    def on_event(self, event: SessionEvent) -> None:
        """Learn the step's calls (logged before any of them runs)."""
        kind = event.type
        if kind == ev.TOOL_CALL:
            call = ev.payload(event, ev.TOOL_CALL)
            self._calls.append(call["call_id"])
            if call["name"] == self._speech_name:
                self._spoke = True
        elif kind == ev.STEP_START:
            self._calls.clear()
            self._fine.clear()
            self._spoke = False

    async def post_execute(
        self, value: PostExecute, next_: Next[PostExecute]
    ) -> PostExecute | None:
        """A `tools/post-execute` listener on the encounter's agent layer."""
        after = await next_(value)
        if after is None:
            return None
        call_id = after.call.id
        self._fine[call_id] = _went_well(after.result)
        last = bool(self._calls) and call_id == self._calls[-1]
        # Calls without results here (unknown tool, invalid arguments) failed: stay open.
        if self._spoke and last and all(self._fine.get(call, False) for call in self._calls):
            after.run.conclude_turn()
        return after
