"""`star-harness web`: the browser UI on 127.0.0.1:3080 (chat, NPC transcripts, Godot panel)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from ._llm_options import (
    AGENT_PROFILE,
    BaseUrl,
    Model,
    PatchFiles,
    ProjectDir,
    Provider,
    interactive_profile,
)

if TYPE_CHECKING:
    from ..runtime.config import ResolvedProfile
    from ..webui import WebSettings


def register(app: typer.Typer) -> None:
    """Add the `web` command to `app`."""
    app.command(
        "web",
        help=(
            "Serve the web UI (default http://127.0.0.1:3080): chats with streamed answers, "
            "tool calls and approvals; stored sessions to resume; NPC encounter transcripts; "
            "the Godot bridge panel (with --profile godot). Loopback only unless a token is "
            "configured with --auth-token-env. Trust: without --auth-token-env, any program "
            "of any user on this machine can drive it, approving its own shell and write_file "
            "calls (pages of other sites cannot); on a shared machine, set a token."
        ),
    )(web)


def web(
    profile: Annotated[str, typer.Option(help="Profile name or YAML file.")] = AGENT_PROFILE,
    host: Annotated[
        str, typer.Option(help="Address to bind (anything but loopback needs --auth-token-env).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 3080,
    auth_token_env: Annotated[
        str | None,
        typer.Option(help="Variable holding the token browsers must present.", metavar="NAME"),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option("--allow-host", help="Also accept this Host name (behind a proxy)."),
    ] = None,
    allow_origin: Annotated[
        list[str] | None, typer.Option("--allow-origin", help="Also accept this Origin.")
    ] = None,
    header_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds a request may take to arrive whole; later it gets 408 and is closed.",
            min=0.1,
        ),
    ] = 10.0,
    connections_per_address: Annotated[
        int,
        typer.Option(
            help="Sockets one client address may hold open (loopback is never capped); 0: no cap.",
            min=0,
        ),
    ] = 256,
    project: ProjectDir = None,
    provider: Provider = None,
    model: Model = None,
    base_url: BaseUrl = None,
    patch: PatchFiles = None,
) -> None:
    import asyncio
    import contextlib

    from ..webui import WebSettings

    resolved = interactive_profile("web", profile, patch, (provider, model, base_url), project)
    settings = WebSettings(
        host=host,
        port=port,
        auth_token_env=auth_token_env,
        allow_hosts=tuple(allow_host or ()),
        allow_origins=tuple(allow_origin or ()),
        header_timeout_s=header_timeout,
        connections_per_address=connections_per_address or None,
    )
    from ..npc.server import ExposureError
    from ._errors import CliError

    try:
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how it is meant to stop
            asyncio.run(run_web(resolved, settings))
    except (ExposureError, OSError) as error:
        raise CliError(f"web: {error}") from None


async def run_web(resolved: ResolvedProfile, settings: WebSettings) -> None:
    """Start the profile and the web UI; serve until interrupted."""
    from importlib.metadata import version

    from .. import composition
    from ..runtime.config import start
    from ..runtime.protocol import HostInfo
    from ..webui import start_web

    # Without a usable model the page still opens: transcripts and the Godot panel need none,
    # and the page says how to configure one (initialize's `model`).
    resolved = await composition.without_unusable_models(resolved, "star-harness web")
    async with await start(resolved) as runtime:
        info = HostInfo(
            profile=resolved.name, version=version("star-harness"), session_prefix="web"
        )
        running = await start_web(runtime.ctx, info, settings)
        sys.stderr.write(f"star-harness web: {running.url} (profile {resolved.name})\n")
        sys.stderr.flush()
        try:
            await running.wait()
        finally:
            await running.stop()
