"""Generate docs/frames.schema.json from the frame models.

Run as `python -m starharness.npc.frames.schema_gen OUT --moods a,b,c --attitude -100,100`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .protocol import build_protocol
from .schema import write_schema


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
    moods: Annotated[str, typer.Option(help="Comma-separated mood names.")],
    attitude: Annotated[str, typer.Option(help="Attitude range as LOW,HIGH.")],
    max_options: Annotated[
        int | None, typer.Option(help="Most items in one options frame.")
    ] = None,
) -> None:
    """Write the frame protocol's JSON Schema for a game's moods and attitude range."""
    try:
        protocol = build_protocol(
            parse_moods(moods), parse_attitude_range(attitude), max_options=max_options
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    write_schema(out, protocol)
    typer.echo(f"wrote {out}")


def main() -> None:
    """Command-line entry point."""
    typer.run(generate)


if __name__ == "__main__":
    main()
