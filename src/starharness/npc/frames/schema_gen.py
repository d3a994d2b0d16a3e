"""Generate docs/frames.schema.json from the frame models.

Run as `python -m starharness.npc.frames.schema_gen OUT --moods a,b,c --attitude -100,100`, or
`... OUT --game package.module:GAME` for a game's own (HUD included); `--check` writes nothing
and exits 1 with a diff when OUT is not a fresh generation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .protocol import build_protocol
from .schema import schema_text


def parse_moods(text: str) -> list[str]:
    """Split a comma-separated mood list, as given on the command line."""
    return [mood.strip() for mood in text.split(",") if mood.strip()]


def parse_attitude_range(text: str) -> tuple[int, int]:
    """Parse `LOW,HIGH` (or `LOW..HIGH`) into a pair of integers."""
    low, separator, high = text.replace("..", ",").partition(",")
    try:
        if separator:
            return int(low), int(high)
    except ValueError:
        pass
    raise ValueError(f"attitude range must look like LOW,HIGH with integers, got {text!r}")


def generate(
    out: Annotated[Path, typer.Argument(metavar="OUT", help="Where to write the schema.")],
    moods: Annotated[str | None, typer.Option(help="Comma-separated mood names.")] = None,
    attitude: Annotated[str | None, typer.Option(help="Attitude range as LOW,HIGH.")] = None,
    max_options: Annotated[
        int | None, typer.Option(help="Most items in one options frame.")
    ] = None,
    game: Annotated[
        str | None,
        typer.Option(help="A game (package.module:attr): its moods, attitude range and HUD."),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(help="Write nothing: exit 1 with a diff when OUT is not a fresh generation."),
    ] = False,
) -> None:
    """Write the frame protocol's JSON Schema for a game's moods and attitude range."""
    text, regenerate = _generated(out, moods, attitude, max_options, game)
    if check:
        from ...runtime.generated import check_generated, read_or_none

        code = check_generated(out, text, read_or_none(out), regenerate)
        if code:
            raise typer.Exit(code)
        typer.echo(f"{out} is fresh")
        return
    out.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {out}")


def _generated(
    out: Path, moods: str | None, attitude: str | None, max_options: int | None, game: str | None
) -> tuple[str, str]:
    """The schema text and the command that writes it."""
    command = "uv run python -m starharness.npc.frames.schema_gen"
    if game is not None:
        if moods is not None or attitude is not None or max_options is not None:
            raise typer.BadParameter("--game takes its moods, attitude and options from the game")
        from ..encounter import GameDefinitionError
        from ..game_loading import GameLoadError, load_game
        from ..game_schema import game_schema_text

        try:
            return game_schema_text(load_game(game)), f"{command} {out} --game {game}"
        except (GameLoadError, GameDefinitionError) as exc:
            raise typer.BadParameter(str(exc)) from None
    if moods is None or attitude is None:
        raise typer.BadParameter("give --moods and --attitude, or --game")
    try:
        protocol = build_protocol(
            parse_moods(moods), parse_attitude_range(attitude), max_options=max_options
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    options = f" --max-options {max_options}" if max_options is not None else ""
    return schema_text(protocol), f"{command} {out} --moods {moods} --attitude {attitude}{options}"


def main() -> None:
    """Command-line entry point."""
    typer.run(generate)


if __name__ == "__main__":
    main()
