"""The `star-harness` command. Each command lives in its own module with `register(app)`.

Command modules import only typer at module level, so `star-harness --help` stays fast.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

from . import (
    acp_cmd,
    chat,
    config,
    eval_cmd,
    inspect_cmd,
    mcp,
    mock_llm,
    models,
    new_game,
    play,
    plugin_cmd,
    rpc,
    run,
    schema_cmd,
    seed,
    serve,
    talk,
    token,
    web,
)
from ._errors import USAGE_EXIT, user_message

__all__ = ["app", "main", "run_cli"]

app = typer.Typer(
    name="star-harness",
    add_completion=False,
    # Locals in a traceback could include a credential; never print them.
    pretty_exceptions_show_locals=False,
    help="star-harness: give game NPCs an LLM brain that cannot cheat.",
)


def _print_version(asked: bool) -> None:
    if asked:
        from .. import __version__

        typer.echo(f"star-harness {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """The options before any command (`star-harness --version`)."""


for _command in (
    play,
    serve,
    talk,
    chat,
    run,
    mcp,
    inspect_cmd,
    config,
    seed,
    mock_llm,
    models,
    eval_cmd,
    rpc,
    acp_cmd,
    web,
    schema_cmd,
    new_game,
    token,
    plugin_cmd,
):
    _command.register(app)


def run_cli(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv` (default: sys.argv) and return its exit code."""
    args = run.profile_shape(list(argv) if argv is not None else sys.argv[1:])
    try:
        result = app(args=args or ["--help"], prog_name="star-harness", standalone_mode=False)
    except typer.TyperException as exc:
        # Usage errors (bad flags, missing arguments) end up here, as one line.
        _error(exc.format_message() + _help_hint(exc))
        return exc.exit_code
    except typer.Abort:
        _error("aborted")
        return 130
    except Exception as exc:
        message = user_message(exc)
        if message is None:
            raise
        _error(message)
        return USAGE_EXIT
    return result if isinstance(result, int) else 0


def main() -> None:
    """Console-script entry point."""
    sys.exit(run_cli())


def _help_hint(exc: typer.TyperException) -> str:
    command_path = getattr(getattr(exc, "ctx", None), "command_path", None)
    return f" (see: {command_path} --help)" if isinstance(command_path, str) else ""


def _error(message: str) -> None:
    sys.stderr.write(f"error: {' '.join(message.split())}\n")
    sys.stderr.flush()
