"""Options every command that talks to a model shares, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

Provider = Annotated[
    str | None,
    typer.Option(help="LLM provider: deepseek, openai, openai-compatible or llama-cpp."),
]
Model = Annotated[str | None, typer.Option(help="Model name (default: the provider's).")]
BaseUrl = Annotated[
    str | None, typer.Option("--base-url", help="Send model requests to this server instead.")
]
PatchFiles = Annotated[
    list[Path] | None,
    typer.Option("--patch", help="Patch file applied last; repeat for more.", metavar="FILE"),
]
