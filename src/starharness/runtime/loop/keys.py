"""The agents package's service key (declared here, beside the plugin that provides it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..kernel import ServiceKey

if TYPE_CHECKING:
    from .manager import AgentManager

AGENTS: ServiceKey[AgentManager] = ServiceKey(
    "agents", "add the agents plugin", provider="starharness.runtime.loop:AgentsPlugin"
)
