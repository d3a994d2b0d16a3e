"""Names of the session event types and the shape of their data.

Only user/message, assistant/message, tool/result and view/rewrite (session/view.py) are
model-visible; the rest are kept for replay, observers and recovery.
"""

from __future__ import annotations

from typing import Final, Literal

TURN_START: Final = "turn/start"
"""{turn}"""
TURN_END: Final = "turn/end"
"""{turn, reason: TurnEndReason, error?}"""
STEP_START: Final = "step/start"
"""{turn, step}"""
STEP_END: Final = "step/end"
"""{turn, step}"""
USER_MESSAGE: Final = "user/message"
"""{content, source} -- model-visible, whatever the source (including "context")."""
ASSISTANT_CHUNK: Final = "assistant/chunk"
"""{turn, step, chunk: {type, ...fields of the StreamChunk}}"""
ASSISTANT_MESSAGE: Final = "assistant/message"
"""{turn, step, text, reasoning?, tool_calls: [{id, name, arguments}], usage?, finish}"""
TOOL_CALL: Final = "tool/call"
"""{turn, step, call_id, name, arguments}"""
TOOL_RESULT: Final = "tool/result"
"""{turn, step, call_id, name, content, is_error, error?: {code, message}}"""
REQUEST_HEADER: Final = "request/header"
"""{system, tools: [{name, description, parameters}], reason: initial|change|resume}"""
REQUEST_CONTEXT: Final = "request/context"
"""{provider, model, max_tokens?, tool_choice, quirk?: {choice, reason, tool?}} -- marks one
request sent to the model; `quirk` says how a provider quirk changed it (forced-tool/unstreamed)."""
LLM_RETRY: Final = "llm/retry"
"""{attempt, delay_s, error, after_output}"""
APPROVAL_ASKED: Final = "approval/asked"
APPROVAL_DECIDED: Final = "approval/decided"

TurnEndReason = Literal["completed", "aborted", "error", "max-tokens", "interrupted"]
HeaderReason = Literal["initial", "change", "resume"]

INTERRUPTED: Final = "interrupted"
"""turn/end reason written on resume for a turn that a crash cut short."""
