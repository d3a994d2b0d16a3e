"""Service keys of the runtime's own services."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .context import ServiceKey

if TYPE_CHECKING:
    from ..approvals import ApprovalService
    from ..llm import LlmService
    from ..loop import AgentManager
    from ..prompt import PromptService
    from ..session import SessionService
    from ..telemetry import Telemetry
    from ..tools import ToolRegistry

TOOLS: ServiceKey[ToolRegistry] = ServiceKey("tools", "add the tools plugin to the profile")
SESSIONS: ServiceKey[SessionService] = ServiceKey("sessions", "add the sessions plugin")
LLM: ServiceKey[LlmService] = ServiceKey("llm", "add an llm provider plugin")
PROMPT: ServiceKey[PromptService] = ServiceKey("prompt", "add the prompt plugin")
AGENTS: ServiceKey[AgentManager] = ServiceKey("agents", "add the agents plugin")
APPROVALS: ServiceKey[ApprovalService] = ServiceKey("approvals", "add an approvals plugin")
TELEMETRY: ServiceKey[Telemetry] = ServiceKey("telemetry", "add the telemetry plugin")
