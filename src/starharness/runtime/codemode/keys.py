"""The session event types code mode logs (in the calling agent's session, via the sandbox)."""

from collections.abc import Mapping, Sequence
from typing import Any, Final, NotRequired

# typing_extensions: pydantic checks stored data against these TypedDicts (Python < 3.12).
from typing_extensions import TypedDict

from ..session import EventKind

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


CODE_RUN: Final = EventKind("code/run", CodeRunData)
"""{call_id, provider, tools, limits} -- a run_code program was started in the sandbox."""
CODE_CALL: Final = EventKind("code/call", CodeCallData)
"""{call_id, id, name, arguments} -- the program called a host tool (id: `<call_id>.<n>`)."""
CODE_RESULT: Final = EventKind("code/result", CodeResultData)
"""{call_id, id, name, content, is_error, error?} -- that call's result, from the pipeline."""
CODE_DONE: Final = EventKind("code/done", CodeDoneData)
"""{call_id, status, exit_code, calls, output_bytes, message, cpu_ms} -- the program ended."""

KINDS: Final[tuple[EventKind[Any], ...]] = (
    CODE_RUN,
    CODE_CALL,
    CODE_RESULT,
    CODE_DONE,
)
"""Each of these session event types (the docs are made from it)."""

PAYLOADS: Final[Mapping[str, type[Mapping[str, Any]]]] = {kind: kind.shape for kind in KINDS}
"""Each code-mode session event type and the TypedDict of its data (for the docs)."""
