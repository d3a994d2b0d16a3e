"""`star-harness play`: the sample game in the browser; with no API key, the offline brain."""

from __future__ import annotations

import typer

from . import _game_options as opt


def register(app: typer.Typer) -> None:
    """Add the `play` command to `app`."""
    app.command(
        "play", help="Play the sample game in the browser (no API key: the built-in offline brain)."
    )(play)


def play(
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
    from starharness import app as composition

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
    profile = resolve("play", flags, web_root=composition.web_root())
    raise typer.Exit(serve_until_stopped("play", profile, started_at))
