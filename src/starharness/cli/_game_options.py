"""The `play` and `serve` commands: their shared options, declared once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from ._llm_options import BaseUrl, Model, PatchFiles, Provider

Host = Annotated[
    str | None,
    typer.Option(help="Address to bind (default 127.0.0.1; others need --player-secret-env)."),
]
Port = Annotated[
    int | None,
    typer.Option(help="Port (default 3099; 0 picks a free one).", min=0, max=65535),
]
GameSpec = Annotated[
    str | None,
    typer.Option(
        "--game",
        help="The game as package.module[:attr] or ./path/to/package[:attr]; attr defaults to "
        "GAME (default: Omega station).",
    ),
]
WorldFile = Annotated[
    str | None,
    typer.Option(
        "--world",
        help="World file, or postgresql://user@host:port/db (created and seeded if missing).",
    ),
]
WorldPasswordEnv = Annotated[
    str | None,
    typer.Option(
        "--world-password-env",
        help="Variable holding the password of a postgresql:// --world.",
        metavar="NAME",
    ),
]
WorldConnections = Annotated[
    int | None,
    typer.Option(
        "--world-connections",
        help="World calls at once, and connections, for a postgresql:// --world (default 8).",
        min=1,
        max=256,
        metavar="N",
    ),
]
Offline = Annotated[
    bool, typer.Option("--offline", help="Use the built-in offline brain even with a key.")
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
PlayerSecretEnv = Annotated[
    str | None,
    typer.Option(
        help="Variable holding the secret player tokens are signed with (see `token mint`).",
        metavar="NAME",
    ),
]
PublicName = Annotated[
    list[str] | None,
    typer.Option(
        "--public-name",
        help="A host name clients reach the server by, besides loopback names.",
        metavar="HOST",
    ),
]
ResidentName = Annotated[
    list[str] | None,
    typer.Option(
        "--resident",
        help="Run one of the game's resident agents after each clock tick (Omega station: "
        "director). Off by default.",
        metavar="NAME",
    ),
]
FanoutUrl = Annotated[
    str | None,
    typer.Option(
        "--fanout",
        help="A PostgreSQL bus (postgresql://user@host/db, no password) shared by the workers "
        "serving one world: news, HUD updates and the clock reach all of them.",
        metavar="URL",
    ),
]
FanoutPasswordEnv = Annotated[
    str | None,
    typer.Option(help="Variable holding the --fanout database's password.", metavar="NAME"),
]
WorkerId = Annotated[
    str | None,
    typer.Option(
        help="This worker's name in metrics and /readyz (default host:pid).", metavar="ID"
    ),
]
ReadyFile = Annotated[
    Path | None,
    typer.Option("--ready-file", help="Write {url, ws, pid} here once /healthz answers."),
]


def game_command(command: str, *, browser_client: bool) -> Callable[..., None]:
    """The command function for `play` (with the browser client) or `serve` (without)."""

    def run_game(
        host: Host = None,
        port: Port = None,
        game: GameSpec = None,
        world: WorldFile = None,
        provider: Provider = None,
        model: Model = None,
        base_url: BaseUrl = None,
        offline: Offline = False,
        patch: PatchFiles = None,
        auth_token_env: AuthTokenEnv = None,
        allow_origin: AllowOrigin = None,
        ready_file: ReadyFile = None,
        player_secret_env: PlayerSecretEnv = None,
        public_name: PublicName = None,
        resident: ResidentName = None,
        world_password_env: WorldPasswordEnv = None,
        fanout: FanoutUrl = None,
        fanout_password_env: FanoutPasswordEnv = None,
        worker_id: WorkerId = None,
        world_connections: WorldConnections = None,
    ) -> None:
        import time

        started_at = time.perf_counter()
        from .. import composition
        from ._game_command import GameFlags, resolve, serve_until_stopped

        flags = GameFlags(
            host, port, game, world, provider, model, base_url, offline,
            patch or (), auth_token_env, allow_origin or (), ready_file,
            player_secret_env, public_name or (), resident or (),
            world_password_env=world_password_env, fanout=fanout,
            fanout_password_env=fanout_password_env, worker_id=worker_id,
            world_connections=world_connections,
        )  # fmt: skip
        web_root = composition.web_root() if browser_client else None
        profile = resolve(command, flags, web_root=web_root)
        raise typer.Exit(serve_until_stopped(command, profile, started_at))

    return run_game
