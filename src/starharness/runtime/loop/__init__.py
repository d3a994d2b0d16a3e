"""The agent loop: agents, turns and steps, hooks, and the headless runner."""

from .agent import Agent, CancelCause
from .hooks import (
    AGENT_CREATED,
    AGENT_DISPOSED,
    COMPACT,
    PRE_STEP,
    REQUEST,
    SESSION_EVENT,
    STATUS,
    TURN_STOPPING,
    CompactRequest,
    LoggedEvent,
    OutgoingRequest,
    StatusChange,
    StepPlan,
    TurnStopping,
)
from .keys import AGENTS
from .manager import AgentExistsError, AgentHandle, AgentManager, AgentsConfig, AgentsPlugin
from .options import AgentOptions

__all__ = [
    "AGENTS",
    "AGENT_CREATED",
    "AGENT_DISPOSED",
    "COMPACT",
    "PRE_STEP",
    "REQUEST",
    "SESSION_EVENT",
    "STATUS",
    "TURN_STOPPING",
    "Agent",
    "AgentExistsError",
    "AgentHandle",
    "AgentManager",
    "AgentOptions",
    "AgentsConfig",
    "AgentsPlugin",
    "CancelCause",
    "CompactRequest",
    "LoggedEvent",
    "OutgoingRequest",
    "StatusChange",
    "StepPlan",
    "TurnStopping",
]
