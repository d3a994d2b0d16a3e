"""Test support: an in-process provider that plays the mock LLM's steps, and its plugin."""

from .plugin import ScriptedLlmConfig, ScriptedLlmPlugin
from .scripted import ScriptedProvider, ScriptExhaustedError, ScriptStep

__all__ = [
    "ScriptExhaustedError",
    "ScriptStep",
    "ScriptedLlmConfig",
    "ScriptedLlmPlugin",
    "ScriptedProvider",
]
