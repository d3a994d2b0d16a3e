"""The session event types code mode logs (in the calling agent's session, via the sandbox)."""

from collections.abc import Mapping, Sequence
from typing import Any, Final, NotRequired, TypedDict

CODE_RUN: Final = "code/run"
"""{call_id, provider, tools, limits} -- a run_code program was started in the sandbox."""
CODE_CALL: Final = "code/call"
"""{call_id, id, name, arguments} -- the program called a host tool (id: `<call_id>.<n>`)."""
CODE_RESULT: Final = "code/result"
"""{call_id, id, name, content, is_error, error?} -- that call's result, from the pipeline."""
CODE_DONE: Final = "code/done"
"""{call_id, status, exit_code, calls, output_bytes, message, cpu_ms} -- the program ended."""


# No `from __future__ import annotations` here: TypedDict must see NotRequired to know which
# keys are optional.


class CodeRunData(TypedDict):
    """A program started: which provider confines it, the tools it may call, its limits."""

    call_id: str
    provider: str
    tools: Sequence[str]
    limits: Mapping[str, float]


class CodeCallData(TypedDict):
    """A host tool call made by the program; it runs through the same pipeline as any call."""

    call_id: str
    id: str
    name: str
    arguments: str


class CodeErrorData(TypedDict):
    code: str


class CodeResultData(TypedDict):
    call_id: str
    id: str
    name: str
    content: str
    is_error: bool
    error: NotRequired[CodeErrorData]


class CodeDoneData(TypedDict):
    """Status: ok, error, memory, cpu, wall, blocked, exit, unconfined, protocol, calls, killed."""

    call_id: str
    status: str
    exit_code: int | None
    calls: int
    output_bytes: int
    message: str
    cpu_ms: float | None
    """The program's own CPU time as its process counted it (None: it ended before saying)."""


PAYLOADS: Final[Mapping[str, type[Mapping[str, Any]]]] = {
    CODE_RUN: CodeRunData,
    CODE_CALL: CodeCallData,
    CODE_RESULT: CodeResultData,
    CODE_DONE: CodeDoneData,
}
"""Each code-mode session event type and the TypedDict of its data (for the docs)."""
