"""A real model offline: llama.cpp's server for a GGUF file, run as an owned child process."""

from .errors import INSTALL_HINT, LocalModelError
from .gguf import BUNDLED_FILE, bundled_model, resolve_model, server_installed
from .server import (
    CHAT_FORMAT,
    DEFAULT_CONTEXT,
    DEFAULT_HOST,
    DEFAULT_PORT,
    LocalModelServer,
    LocalServerSettings,
    available_cores,
    describe_exit,
)

__all__ = [
    "BUNDLED_FILE",
    "CHAT_FORMAT",
    "DEFAULT_CONTEXT",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "INSTALL_HINT",
    "LocalModelError",
    "LocalModelServer",
    "LocalServerSettings",
    "available_cores",
    "bundled_model",
    "describe_exit",
    "resolve_model",
    "server_installed",
]
