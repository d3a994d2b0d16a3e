"""The options `play` and `serve` share, declared once."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

Host = Annotated[
    str | None,
    typer.Option(help="Address to bind (default 127.0.0.1; others need --auth-token-env)."),
]
Port = Annotated[int | None, typer.Option(help="Port (default 3099; 0 picks a free one).")]
GameSpec = Annotated[
    str | None,
    typer.Option("--game", help="The game as package.module:attr (default: Omega station)."),
]
WorldFile = Annotated[
    Path | None, typer.Option("--world", help="World file (created and seeded if missing).")
]
Provider = Annotated[
    str | None,
    typer.Option(help="LLM provider: deepseek, openai or openai-compatible (needs its key)."),
]
Model = Annotated[str | None, typer.Option(help="Model name (default: the provider's).")]
BaseUrl = Annotated[
    str | None, typer.Option("--base-url", help="Send model requests to this server.")
]
Offline = Annotated[
    bool, typer.Option("--offline", help="Use the built-in offline brain even with a key.")
]
PatchFiles = Annotated[
    list[Path] | None,
    typer.Option("--patch", help="Patch file applied last; repeat for more.", metavar="FILE"),
]
AuthTokenEnv = Annotated[
    str | None,
    typer.Option(help="Variable holding the token clients must present.", metavar="NAME"),
]
AllowOrigin = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-origin", help="Another browser origin allowed to connect.", metavar="URL"
    ),
]
ReadyFile = Annotated[
    Path | None,
    typer.Option("--ready-file", help="Write {url, ws, pid} here once /healthz answers."),
]
