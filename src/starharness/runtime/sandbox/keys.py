"""The sandbox's service key and the session event types it logs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ..kernel import ServiceKey

if TYPE_CHECKING:
    from .service import SandboxService

SANDBOX: ServiceKey[SandboxService] = ServiceKey(
    "sandbox", "add a row with plugin starharness.runtime.sandbox:SandboxPlugin"
)

SANDBOX_MODE: Final = "sandbox/mode"
"""{tier, previous, provider?} -- the agent's tier changed (after an approved escalation)."""
COMMAND_RUN: Final = "command/run"
"""{call_id, command, tier, network, provider, job?} -- a confined command was spawned."""
COMMAND_DONE: Final = "command/done"
"""{call_id, exit_code, timed_out, output_bytes, job?} -- it ended (or was stopped)."""
SANDBOX_REFUSED: Final = "sandbox/refused"
"""{call_id, code, message} -- a command was refused before any process started."""
