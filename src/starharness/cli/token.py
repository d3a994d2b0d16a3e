"""`star-harness token mint`: a player token for testing a server that requires them."""

from __future__ import annotations

from typing import Annotated

import typer

from ._errors import CliError


def register(app: typer.Typer) -> None:
    """Add the `token` command group to `app`."""
    group = typer.Typer(help="Player tokens (what a game's backend issues at login).")
    group.command("mint", help="Print a signed, expiring player token (for testing).")(mint)
    app.add_typer(group, name="token")


def mint(
    player: Annotated[str, typer.Argument(help="The player id (the token's `sub`).")],
    secret_env: Annotated[
        str,
        typer.Option(
            "--secret-env",
            help="Variable holding the signing secret (the server's --player-secret-env).",
            metavar="NAME",
        ),
    ],
    ttl: Annotated[float, typer.Option(help="Seconds until the token expires.")] = 3600.0,
    scope: Annotated[
        list[str] | None,
        typer.Option(help="Extra rights: world.tick, metrics (repeatable).", metavar="SCOPE"),
    ] = None,
    audience: Annotated[str, typer.Option(help="The `aud` claim.")] = "star-harness",
) -> None:
    from ..npc.identity import PlayerTokenError, mint_player_token
    from ..runtime.credentials import get_secret

    secret = get_secret(secret_env)
    if secret is None or not secret.reveal().strip():
        raise CliError(f"token mint: {secret_env} is not set")
    try:
        token = mint_player_token(
            secret.reveal().strip(), player, ttl_s=ttl, scopes=scope or (), audience=audience
        )
    except (PlayerTokenError, ValueError) as exc:
        raise CliError(f"token mint: {exc}") from None
    typer.echo(token)
