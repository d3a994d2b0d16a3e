"""The sandbox's service key and the session event types it logs."""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, NotRequired

# typing_extensions: pydantic checks stored data against these TypedDicts (Python < 3.12).
from typing_extensions import TypedDict

from ..kernel import ServiceKey
from ..session import EventKind

if TYPE_CHECKING:
    from .service import SandboxService

SANDBOX: "ServiceKey[SandboxService]" = ServiceKey(
    "sandbox", "add a row with plugin starharness.runtime.sandbox:SandboxPlugin"
)


# No `from __future__ import annotations` here: TypedDict must see NotRequired to know which
# keys are optional.


class SandboxModeData(TypedDict):
    call_id: str
    tier: str
    previous: str


class CommandRunData(TypedDict):
    call_id: str
    command: str
    tier: str
    network: bool
    provider: str
    job: NotRequired[str]


class CommandDoneData(TypedDict):
    """A command ended (`exit_code`, `timed_out`, `output_bytes`), or job_stop stopped a job
    (`job` and the job's `status` after it)."""

    call_id: str
    exit_code: NotRequired[int | None]
    timed_out: NotRequired[bool]
    output_bytes: NotRequired[int]
    job: NotRequired[str]
    status: NotRequired[str]


class SandboxRefusedData(TypedDict):
    call_id: str
    code: str
    message: str


class JobStateData(TypedDict):
    job: str
    command: str
    state: Literal["running", "exited", "stopped"]
    exit_code: int | None
    tail: str
    """The job's latest output (at most TAIL_BYTES), read or not."""


SANDBOX_MODE: Final = EventKind("sandbox/mode", SandboxModeData)
"""{call_id, tier, previous} -- the agent's tier changed (after an approved escalation)."""
COMMAND_RUN: Final = EventKind("command/run", CommandRunData)
"""{call_id, command, tier, network, provider, job?} -- a confined command was spawned."""
COMMAND_DONE: Final = EventKind("command/done", CommandDoneData)
"""{call_id, exit_code, timed_out, output_bytes, job?} -- it ended (or was stopped)."""
SANDBOX_REFUSED: Final = EventKind("sandbox/refused", SandboxRefusedData)
"""{call_id, code, message} -- a command was refused before any process started."""
JOB_STATE: Final = EventKind("job/state", JobStateData)
"""{job, command, state, exit_code, tail} -- a background job was read, exited or was stopped
(log-only: what a display shows; the model reads job_read's result)."""

KINDS: Final[tuple[EventKind[Any], ...]] = (
    SANDBOX_MODE,
    COMMAND_RUN,
    COMMAND_DONE,
    SANDBOX_REFUSED,
    JOB_STATE,
)
"""Each of these session event types (the docs are made from it)."""

PAYLOADS: Final[Mapping[str, type[Mapping[str, Any]]]] = {kind: kind.shape for kind in KINDS}
"""Each sandbox session event type and the TypedDict of its data (for the docs)."""
