"""The runtime's own service keys, for hints that name the plugin a profile is missing."""

from __future__ import annotations

from typing import Any

from ..kernel import ServiceKey


def builtin_keys() -> tuple[ServiceKey[Any], ...]:
    """Every built-in service key; each names its provider where it is declared."""
    # Imported here, not at the top, so loading a profile imports only the rows it names.
    from ..approvals import APPROVALS
    from ..llm import LLM
    from ..loop import AGENTS
    from ..prompt import PROMPT
    from ..session import SESSIONS
    from ..telemetry import TELEMETRY
    from ..tools import TOOLS

    return (SESSIONS, LLM, TOOLS, APPROVALS, PROMPT, AGENTS, TELEMETRY)


def builtin_provider(name: str) -> str:
    """The built-in plugin that provides the service called `name`, or ""."""
    return next((key.provider for key in builtin_keys() if key.name == name), "")
