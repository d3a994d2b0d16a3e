"""A real model offline: llama.cpp's server for a GGUF file, run as an owned child process."""

from .errors import INSTALL_HINT, LocalModelError
from .gguf import (
    bundled_model,
    resolve_model,
    server_installed,
)
from .server import (
    DEFAULT_BATCH_TOKENS,
    DEFAULT_STATE_CACHE_MB,
    LocalModelServer,
    LocalServerSettings,
    describe_exit,
)

__all__ = [
    "DEFAULT_BATCH_TOKENS",
    "DEFAULT_STATE_CACHE_MB",
    "INSTALL_HINT",
    "LocalModelError",
    "LocalModelServer",
    "LocalServerSettings",
    "bundled_model",
    "describe_exit",
    "resolve_model",
    "server_installed",
]
