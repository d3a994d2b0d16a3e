"""`star-harness serve`: Serve the frame protocol for engine clients, without the browser client."""

from __future__ import annotations

import typer

from . import _game_options as opt


def register(app: typer.Typer) -> None:
    """Add the `serve` command to `app`."""
    app.command(
        "serve", help="Serve the frame protocol for engine clients, without the browser client."
    )(serve)


def serve(
    host: opt.Host = None,
    port: opt.Port = None,
    game: opt.GameSpec = None,
    world: opt.WorldFile = None,
    provider: opt.Provider = None,
    model: opt.Model = None,
    base_url: opt.BaseUrl = None,
    offline: opt.Offline = False,
    patch: opt.PatchFiles = None,
    auth_token_env: opt.AuthTokenEnv = None,
    allow_origin: opt.AllowOrigin = None,
    ready_file: opt.ReadyFile = None,
) -> None:
    import time

    started_at = time.perf_counter()
    from ._game_command import GameFlags, resolve, serve_until_stopped

    flags = GameFlags(
        host,
        port,
        game,
        world,
        provider,
        model,
        base_url,
        offline,
        patch or (),
        auth_token_env,
        allow_origin or (),
        ready_file,
    )
    profile = resolve("serve", flags, web_root=None)
    raise typer.Exit(serve_until_stopped("serve", profile, started_at))
