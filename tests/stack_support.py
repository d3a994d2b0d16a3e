"""The runtime rows a game server needs, started in-process with the LLM at a mock's URL.

Shared by the tests that serve a real game (npc, voyage, web, talk); `tests/` is on sys.path
through the root conftest.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from starharness.runtime.kernel import Context, Plugin
from starharness.runtime.llm import LlmConfig, LlmPlugin, RetryConfig, TimeoutsConfig
from starharness.runtime.loop import AgentsConfig, AgentsPlugin
from starharness.runtime.prompt.plugin import PromptConfig, PromptPlugin
from starharness.runtime.session import SessionsConfig, SessionsPlugin
from starharness.runtime.tools import ToolsConfig, ToolsPlugin


async def start_runtime(
    base_url: str,
    *,
    sessions: SessionsConfig | None = None,
    max_attempts: int = 2,
    first_byte_s: float = 10.0,
    provider: str = "openai-compatible",
) -> Context:
    """The runtime rows a game server needs, with the LLM pointed at `base_url`."""
    root = Context("root")
    llm = LlmConfig(
        provider=provider,
        base_url=base_url,
        model="mock-model",
        retry=RetryConfig(max_attempts=max_attempts, base_delay_s=0.0, jitter=0.0),
        timeouts=TimeoutsConfig(first_byte_s=first_byte_s, idle_s=first_byte_s),
    )
    rows: list[tuple[str, Plugin[Any], BaseModel]] = [
        ("sessions", SessionsPlugin(), sessions or SessionsConfig(store="memory")),
        ("llm", LlmPlugin(), llm),
        ("tools", ToolsPlugin(), ToolsConfig()),
        ("prompt", PromptPlugin(), PromptConfig()),
        ("agents", AgentsPlugin(), AgentsConfig()),
    ]
    try:
        for name, plugin, config in rows:
            await plugin.setup(root.fork(name), config)
    except BaseException:
        await root.dispose()
        raise
    return root
