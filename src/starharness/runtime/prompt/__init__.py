"""runtime/prompt: the system prompt from ordered sections, plus dynamic context."""

from .errors import PromptError
from .keys import PROMPT
from .plugin import (
    PERSONA_ORDER,
    TOOL_GUIDANCE_ORDER,
    PromptConfig,
    PromptPlugin,
)
from .service import PromptService, SectionText, VariableValue

__all__ = [
    "PERSONA_ORDER",
    "PROMPT",
    "TOOL_GUIDANCE_ORDER",
    "PromptConfig",
    "PromptError",
    "PromptPlugin",
    "PromptService",
    "SectionText",
    "VariableValue",
]
