"""The eval report as rich tables: one row per turn, then the rules and the numbers."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from .report import EvalReport
from .rules import RULES

_MARK = {True: "[green]✓[/]", False: "[red]✗[/]", None: "[dim]·[/]"}
_SHORT = {
    "completed": "done",
    "spoke_via_action": "act",
    "no_stage_directions": "clean",
    "in_persona": "role",
    "no_narration": "narr",
    "no_echo": "echo",
    "no_self_repeat": "again",
    "reflects_refusal": "hint",
    "no_false_claims": "claim",
    "only_accepted_commits": "agree",
    "options_well_formed": "opts",
    "nothing_raw": "raw",
    "numbers_grounded": "nums",
}
"""Column headers of the turn table (the rule table names each rule in full)."""


def print_report(report: EvalReport, console: Console) -> None:
    """Print the turn table, the rule table and the numbers."""
    console.print(_turn_table(report))
    console.print(_rule_table(report))
    numbers = report.numbers()
    tokens = numbers["tokens_per_turn"]
    estimate = " (output estimated from streamed chunks)" if tokens["estimated"] else ""
    # Means over the turns: whole tokens, with thousands separators.
    reported_input = (
        "n/a" if tokens["estimated"] and not tokens["input"] else _tokens(tokens["input"])
    )
    share = numbers["cache_hit_share"]
    console.print(
        f"{report.target.label()}: {numbers['turns']} turns in {report.duration_s:.1f} s; "
        f"first say.delta median {_seconds(numbers['first_delta_s']['median'])}, "
        f"turn median {_seconds(numbers['turn_s']['median'])}; "
        f"tokens per turn (mean): {reported_input} in, {_tokens(tokens['output'])} out{estimate}; "
        f"cache-hit share {'n/a' if share is None else f'{share:.0%}'}"
    )
    console.print(_outcome_table(report))
    alternatives = report.refusal_alternatives()
    console.print(
        f"refusals then the hinted alternative: {alternatives.passed}/{alternatives.applicable}"
    )
    console.print(
        "turns committing what the player did not accept: "
        f"{report.failed_turns('only_accepted_commits')}"
    )
    console.print(
        f"turns claiming a trade without a commit: {report.failed_turns('no_false_claims')}"
    )
    for scenario in report.scenarios:
        if scenario.error is not None:
            console.print(f"[yellow]scenario {scenario.name} stopped:[/] {scenario.error}")
        if scenario.world is not None and not scenario.world.ok:
            console.print(f"[red]scenario {scenario.name}: world invariants broken[/]")


def _turn_table(report: EvalReport) -> Table:
    table = Table(title=f"star-harness eval: {report.target.label()}")
    table.add_column("turn", no_wrap=True)
    for name in RULES:
        table.add_column(_SHORT.get(name, name), justify="center")
    table.add_column("1st", justify="right")
    table.add_column("turn", justify="right")
    table.add_column("tok", justify="right")
    for scenario in report.scenarios:
        for turn in scenario.turns:
            tokens = turn.tokens
            table.add_row(
                f"{scenario.name}.{turn.index}",
                *(_MARK[turn.verdicts[name].passed] for name in RULES),
                _seconds(turn.first_delta_s),
                _seconds(turn.turn_s),
                f"{tokens.output}{'~' if tokens.estimated else ''}",
            )
    return table


def _rule_table(report: EvalReport) -> Table:
    table = Table(title="rules over all turns")
    table.add_column("rule")
    table.add_column("passed", justify="right")
    table.add_column("share", justify="right")
    table.add_column("first failure")
    failures: dict[str, str] = {}
    for turn in report.turns():
        for name, verdict in turn.verdicts.items():
            if verdict.passed is False and name not in failures:
                failures[name] = verdict.detail
    for name, summary in report.rule_summary().items():
        share = summary.share
        table.add_row(
            name,
            f"{summary.passed}/{summary.applicable}",
            "n/a" if share is None else f"{share:.0%}",
            _clip(failures.get(name, ""), 70),
        )
    return table


def _outcome_table(report: EvalReport) -> Table:
    success = report.task_success()
    share = "n/a" if success.share is None else f"{success.share:.0%}"
    table = Table(
        title=f"task success for {report.target.label()}: {success.passed}/"
        f"{success.applicable} scenarios ({share}), judged from the audit table"
    )
    table.add_column("scenario")
    table.add_column("expected")
    table.add_column("", justify="center")
    table.add_column("audit")
    for scenario in report.scenarios:
        outcome = scenario.outcome
        table.add_row(
            scenario.name,
            scenario.expected or "-",
            _MARK[None if outcome is None else outcome.passed],
            _clip(outcome.detail if outcome is not None else "", 70),
        )
    return table


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}s"


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _tokens(mean: float | None) -> str:
    return "n/a" if mean is None else f"{round(mean):,}"
