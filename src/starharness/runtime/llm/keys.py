"""The LLM package's service key (declared here, beside the plugin that provides it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..kernel import ServiceKey

if TYPE_CHECKING:
    from .service import LlmService

LLM: ServiceKey[LlmService] = ServiceKey(
    "llm", "add an llm provider plugin", provider="starharness.runtime.llm:LlmPlugin"
)
