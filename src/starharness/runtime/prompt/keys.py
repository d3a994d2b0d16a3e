"""The prompt package's service key (declared here, beside the plugin that provides it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..kernel import ServiceKey

if TYPE_CHECKING:
    from .service import PromptService

PROMPT: ServiceKey[PromptService] = ServiceKey(
    "prompt", "add the prompt plugin", provider="starharness.runtime.prompt:PromptPlugin"
)
