"""`star-harness talk`: the frame protocol from a terminal, for headless servers and tests."""

from __future__ import annotations

from typing import Annotated

import typer

_DEFAULT_URL = "ws://127.0.0.1:3099/gh"
_INTERRUPTED = 130


def register(app: typer.Typer) -> None:
    """Add the `talk` command to `app`."""
    app.command(
        "talk",
        help="Talk to the NPCs of a running server (`play` or `serve`) from the terminal.",
    )(talk)


def talk(
    url: Annotated[str, typer.Option(help="The server's frame WebSocket.")] = _DEFAULT_URL,
    npc: Annotated[
        str | None, typer.Option(help="Walk up to this NPC id at once (default: pick from a list).")
    ] = None,
    player: Annotated[
        str | None, typer.Option(help="Player id to act as (default: the sample game's player).")
    ] = None,
    token_env: Annotated[
        str | None,
        typer.Option(help="Name of the variable holding the server's auth token, if it needs one."),
    ] = None,
) -> None:
    """Connect, list who is here, then type lines or option numbers; /help lists commands."""
    import asyncio
    import os
    import sys

    from rich.console import Console

    from ..npc.client import ClientError
    from ..npc.client.terminal import TalkSettings, input_lines, run_talk
    from ._errors import CliError

    token = None
    if token_env is not None:
        token = os.environ.get(token_env, "").strip()
        if not token:
            raise CliError(f"{token_env} is not set: it must hold the server's auth token")
    settings = TalkSettings(
        url=url,
        player_id=player or _default_player(),
        npc_id=npc,
        token=token,
        echo_input=not sys.stdin.isatty(),
    )
    console = Console(highlight=False)
    try:
        status = asyncio.run(run_talk(settings, input_lines(), console))
    except KeyboardInterrupt:
        console.print("\nBye.", style="dim")
        raise typer.Exit(_INTERRUPTED) from None
    except ClientError as exc:
        raise CliError(str(exc)) from None
    raise typer.Exit(status)


def _default_player() -> str:
    from ..voyage import PLAYER_ID

    return PLAYER_ID
