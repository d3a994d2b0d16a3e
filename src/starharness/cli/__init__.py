"""The `star-harness` command."""

import typer

app = typer.Typer(no_args_is_help=True, help="star-harness: LLM NPCs that cannot cheat.")


def main() -> None:
    app()
