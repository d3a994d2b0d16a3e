"""The sandbox's service key and the session event types it logs."""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, NotRequired, TypedDict

from ..kernel import ServiceKey

if TYPE_CHECKING:
    from .service import SandboxService

SANDBOX: "ServiceKey[SandboxService]" = ServiceKey(
    "sandbox", "add a row with plugin starharness.runtime.sandbox:SandboxPlugin"
)

SANDBOX_MODE: Final = "sandbox/mode"
"""{call_id, tier, previous} -- the agent's tier changed (after an approved escalation)."""
COMMAND_RUN: Final = "command/run"
"""{call_id, command, tier, network, provider, job?} -- a confined command was spawned."""
COMMAND_DONE: Final = "command/done"
"""{call_id, exit_code, timed_out, output_bytes, job?} -- it ended (or was stopped)."""
SANDBOX_REFUSED: Final = "sandbox/refused"
"""{call_id, code, message} -- a command was refused before any process started."""
JOB_STATE: Final = "job/state"
"""{job, command, state, exit_code, tail} -- a background job was read, exited or was stopped
(log-only: what a display shows; the model reads job_read's result)."""


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
    call_id: str
    exit_code: int | None
    timed_out: bool
    output_bytes: int
    job: NotRequired[str]


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


PAYLOADS: Final[Mapping[str, type[Mapping[str, Any]]]] = {
    SANDBOX_MODE: SandboxModeData,
    COMMAND_RUN: CommandRunData,
    COMMAND_DONE: CommandDoneData,
    SANDBOX_REFUSED: SandboxRefusedData,
    JOB_STATE: JobStateData,
}
"""Each sandbox session event type and the TypedDict of its data (for the docs)."""
