"""`star-harness eval`: play scripted scenarios against the game and score every NPC turn."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from . import _llm_options as opt
from ._errors import CliError

_HELP = (
    "Play scripted player scenarios against the sample game with a model and score each NPC "
    "turn: spoke through the speech action, no stage directions or meta talk, reflects refusal "
    "hints, never claims an uncommitted trade, stays in persona, well-formed options; plus "
    "latency to the first say.delta and tokens per turn. Prints tables; --out writes JSON."
)


def register(app: typer.Typer) -> None:
    """Add the `eval` command to `app`."""
    app.command("eval", help=_HELP)(eval_command)


def eval_command(
    provider: opt.Provider = None,
    model: opt.Model = None,
    base_url: opt.BaseUrl = None,
    offline: Annotated[
        bool, typer.Option("--offline", help="Play against the game's offline brain (no model).")
    ] = False,
    scenarios: Annotated[
        Path | None,
        typer.Option(help="Scenario file (YAML/JSON); default: the sample game's scenarios."),
    ] = None,
    only: Annotated[
        list[str] | None, typer.Option("--only", help="Run only this scenario (repeatable).")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write the JSON report to this file.")] = None,
    turn_timeout: Annotated[
        float, typer.Option("--turn-timeout", help="Seconds a turn may take.", min=1)
    ] = 300.0,
    patch: opt.PatchFiles = None,
) -> None:
    """Run the scenarios and print the scored report."""
    import asyncio
    import json
    import tempfile

    from rich.console import Console

    from ..eval import (
        EvalReport,
        EvalSettings,
        ScenarioFileError,
        Target,
        default_scenarios,
        load_scenarios,
        print_report,
        run_eval,
    )

    if offline and (provider or model or base_url):
        raise CliError("eval: --offline cannot be combined with --provider/--model/--base-url")
    try:
        chosen = load_scenarios(scenarios or default_scenarios()).only(list(only or []))
    except ScenarioFileError as exc:
        raise CliError(f"eval: {exc}") from None
    target = Target("offline" if offline else provider or "deepseek", model, base_url)
    settings = EvalSettings(
        target=target, offline=offline, turn_timeout_s=turn_timeout, patch_files=tuple(patch or ())
    )
    console = Console()
    if not console.is_terminal:
        # Piped or captured output: wide enough for the turn table instead of 80 columns.
        console = Console(width=120)

    def write(report: EvalReport) -> None:
        if out is None:
            return
        try:
            out.write_text(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
        except OSError as exc:
            raise CliError(f"eval: cannot write {out}: {exc.strerror or exc}") from None

    with tempfile.TemporaryDirectory(prefix="star-harness-eval-") as workdir:
        # The report is written after every scenario, so a stopped run keeps what it measured.
        report = asyncio.run(
            run_eval(
                settings,
                chosen,
                Path(workdir),
                lambda text: console.print(f"[dim]{text}[/]"),
                on_scenario=write,
            )
        )
    print_report(report, console)
    if out is not None:
        write(report)
        console.print(f"report written to {out}")
