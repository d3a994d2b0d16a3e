"""`star-harness mock-llm`: run the scripted OpenAI-compatible mock LLM as a process."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._errors import CliError

if TYPE_CHECKING:
    from ..mockllm import MockLlmServer

_HELP = (
    "Serve an OpenAI-compatible mock LLM. Conversations are told apart by the "
    "X-Star-Harness-Session header; each gets its own copy of --behaviours or the script file's "
    "steps. Point a provider at the printed base URL."
)


def register(app: typer.Typer) -> None:
    """Add the `mock-llm` command to `app`."""
    app.command("mock-llm", help=_HELP)(mock_llm)


def mock_llm(
    host: Annotated[str, typer.Option(help="Address to bind (loopback unless a key is set).")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(help="Port to listen on; 0 picks a free one.")] = 0,
    script: Annotated[
        Path | None, typer.Option(help="YAML or JSON script file (see docs/mock-llm.md).")
    ] = None,
    behaviours: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated behaviours every conversation plays, e.g. success,stall."
        ),
    ] = None,
    repeat_last: Annotated[
        bool, typer.Option(help="Repeat a script's last step instead of failing when exhausted.")
    ] = False,
    responder: Annotated[
        str | None,
        typer.Option(help="module:attr of a callable that picks the step for unscripted requests."),
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option(help="Name of an environment variable holding the bearer key to require."),
    ] = None,
    plays: Annotated[
        str,
        typer.Option(
            help="The kind of server to behave as: full, llama-cpp, no-open-stream, "
            "no-tool-results or strict (see docs/mock-llm.md)."
        ),
    ] = "full",
) -> None:
    """Run the mock LLM until Ctrl-C."""
    import asyncio

    server = _build_server(
        host, port, script, behaviours, repeat_last, responder, api_key_env, plays
    )
    asyncio.run(_serve(server))


def _build_server(
    host: str,
    port: int,
    script: Path | None,
    behaviours: str | None,
    repeat_last: bool,
    responder_spec: str | None,
    api_key_env: str | None,
    plays: str = "full",
) -> MockLlmServer:
    import os

    from ..mockllm import (
        CAPABILITY_PROFILES,
        SERVING_KEEP_CONVERSATIONS,
        MockLlmServer,
        Responder,
        ScriptFileError,
        Success,
        load_responder,
        load_script_file,
        parse_behaviour_list,
    )

    if script is not None and behaviours is not None:
        raise CliError("mock-llm: give either --script or --behaviours, not both")
    capabilities = CAPABILITY_PROFILES.get(plays)
    if capabilities is None:
        known = ", ".join(CAPABILITY_PROFILES)
        raise CliError(f"mock-llm: --plays {plays!r} is not a kind of server it plays ({known})")
    api_key: str | None = None
    if api_key_env is not None:
        api_key = os.environ.get(api_key_env)
        if not api_key:
            raise CliError(f"mock-llm: environment variable {api_key_env} is not set")
    from ..npc.server import is_loopback

    if api_key is None and not is_loopback(host):
        raise CliError(
            f"mock-llm: binding {host} exposes the mock beyond this machine; set --api-key-env"
        )
    responder: Responder | None = None
    if responder_spec is not None:
        try:
            responder = load_responder(responder_spec)
        except ValueError as exc:
            raise CliError(f"mock-llm: {exc}") from None
    # Nothing reads a served mock's records, and its unnamed conversations are bounded: a
    # long-running mock must not grow with every request it has answered.
    server = MockLlmServer(
        host=host,
        port=port,
        api_key=api_key,
        responder=responder,
        repeat_last=repeat_last,
        keep_requests=0,
        keep_conversations=SERVING_KEEP_CONVERSATIONS,
        plays=capabilities,
    )
    try:
        if script is not None:
            server.load_script(load_script_file(script))
        elif behaviours is not None:
            server.script_each(parse_behaviour_list(behaviours))
        elif responder is None:
            # Nothing chosen: every conversation gets the default success answer, forever.
            server.script_each([Success()], repeat_last=True)
    except (ScriptFileError, ValueError) as exc:
        raise CliError(f"mock-llm: {exc}") from None
    return server


async def _serve(server: MockLlmServer) -> None:
    import asyncio
    import signal

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    # Ctrl-C and SIGTERM end the wait below, so shutdown is a normal return, not a traceback.
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        async with server:
            base_url = server.base_url
            typer.echo(f"mock LLM listening on {base_url}")
            typer.echo(f"DEEPSEEK_BASE_URL={base_url}")
            typer.echo(f"OPENAI_BASE_URL={base_url}")
            typer.echo("Ctrl-C stops it.")
            await stop.wait()
    except OSError as exc:
        raise CliError(f"mock-llm: cannot listen: {exc}") from None
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    typer.echo("mock LLM stopped")
