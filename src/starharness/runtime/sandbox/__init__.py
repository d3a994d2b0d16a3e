"""runtime/sandbox: commands run confined (bubblewrap, Landlock, Seatbelt) or not at all."""

from . import landlock_exec
from .bubblewrap import BubblewrapProvider
from .chain import Confined, SandboxChain
from .errors import SANDBOX_UNAVAILABLE, SandboxUnavailableError
from .jobs import Job, JobError, JobRead, JobTable
from .keys import COMMAND_DONE, COMMAND_RUN, JOB_STATE, SANDBOX, SANDBOX_MODE, SANDBOX_REFUSED
from .landlock import LandlockProvider, beneath_except, landlock_rules
from .plugin import SandboxConfig, SandboxPlugin
from .policy import SandboxPolicy, confined_env, default_hidden
from .processes import CommandResult, ProcessOwner, run_once
from .provider import SandboxProvider
from .seatbelt import SeatbeltProvider, seatbelt_profile
from .service import SANDBOX_RECORD, AgentSandbox, SandboxRecord, SandboxService, SandboxSettings
from .tiers import EscalationRefusedError, Tier, check_escalation
from .tools import sandbox_tools
from .unconfined import UnconfinedProvider

__all__ = [
    "COMMAND_DONE",
    "COMMAND_RUN",
    "JOB_STATE",
    "SANDBOX",
    "SANDBOX_MODE",
    "SANDBOX_RECORD",
    "SANDBOX_REFUSED",
    "SANDBOX_UNAVAILABLE",
    "AgentSandbox",
    "BubblewrapProvider",
    "CommandResult",
    "Confined",
    "EscalationRefusedError",
    "Job",
    "JobError",
    "JobRead",
    "JobTable",
    "LandlockProvider",
    "ProcessOwner",
    "SandboxChain",
    "SandboxConfig",
    "SandboxPlugin",
    "SandboxPolicy",
    "SandboxProvider",
    "SandboxRecord",
    "SandboxService",
    "SandboxSettings",
    "SandboxUnavailableError",
    "SeatbeltProvider",
    "Tier",
    "UnconfinedProvider",
    "beneath_except",
    "check_escalation",
    "confined_env",
    "default_hidden",
    "landlock_exec",
    "landlock_rules",
    "run_once",
    "sandbox_tools",
    "seatbelt_profile",
]
