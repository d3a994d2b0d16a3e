"""`star-harness eval --offline`: the whole pipeline with the game's offline brain, no model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from starharness.eval import (
    RULES,
    EvalSettings,
    Target,
    default_scenarios,
    load_scenarios,
    needing_consent,
    run_eval,
)
from starharness.voyage import GAME


async def test_every_shipped_scenario_plays_and_scores_every_turn(tmp_path: Path) -> None:
    scenarios = load_scenarios(default_scenarios())
    names = {s.name for s in scenarios.scenarios}
    expected = {"greeting", "buy", "unaffordable-buy", "haggle", "return-visit"}
    assert names >= {*expected, "prompt-injection"}
    assert len(scenarios.scenarios) >= 20
    settings = EvalSettings(Target("offline"), offline=True, turn_timeout_s=30)
    report = await run_eval(settings, scenarios, tmp_path)
    assert [s.name for s in report.scenarios] == [s.name for s in scenarios.scenarios]
    for scenario in report.scenarios:
        assert scenario.error is None, scenario.error
        assert scenario.world is not None and scenario.world.ok
        steps = next(s for s in scenarios.scenarios if s.name == scenario.name).steps
        assert len(scenario.turns) == sum(1 for step in steps if step.starts_turn)
        for turn in scenario.turns:
            # Read from the wire's encounter.opened: the persona rules judge names by it.
            assert turn.npc in {"Jonah Karsk", "Ilse Brandt", "Vex", "Nadia Okoro"}, turn.npc
            assert set(turn.verdicts) == set(RULES)
            assert turn.tokens.estimated is False and turn.tokens.input > 0
            # The offline brain is the control: it keeps every rule that applies.
            failed = {n: v.detail for n, v in turn.verdicts.items() if v.passed is False}
            assert not failed, (scenario.name, turn.index, turn.said, failed)
        # ...and achieves every outcome a scenario declares.
        if scenario.outcome is not None:
            assert scenario.outcome.passed, (scenario.name, scenario.outcome.detail)
    data = report.to_json()
    summary = data["summary"]
    assert summary["turns"] == len(report.turns())
    assert summary["cache_hit_share"] is not None
    # The offline brain reads refusals, so the refusal rule gets something to judge.
    assert summary["rules"]["reflects_refusal"]["applicable"] >= 1
    # Deals were taken through offers the player accepted, and only those committed.
    assert summary["rules"]["only_accepted_commits"]["applicable"] >= 20
    assert summary["turns_committing_unaccepted"] == 0
    assert summary["turns_claiming_without_commit"] == 0
    alternatives = summary["refusal_then_alternative"]
    assert alternatives["scenarios"] >= 5 and alternatives["passed"] == alternatives["scenarios"]
    picked = [t for t in report.turns() if t.said.startswith("[") and t.actions]
    assert picked, "no accept step picked an offer that committed"


def test_the_games_own_declaration_says_what_needs_acceptance() -> None:
    # What only_accepted_commits judges comes from the game (takes_from=Role.PLAYER), so a
    # scenario file needs no list of its own.
    assert needing_consent(GAME) == {
        "player_buys",
        "player_sells",
        "book_passage",
        "sell_intel",
        "complete_quest",
    }
    assert load_scenarios(default_scenarios()).takes_from_player == []


def test_the_command_prints_tables_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    command = [sys.executable, "-m", "starharness.cli", "eval", "--offline"]
    command += ["--only", "greeting", "--out", str(out)]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        env={"STAR_HARNESS_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rules over all turns" in result.stdout
    assert "greeting.1" in result.stdout
    assert "refusals then the hinted alternative: 0/0" in result.stdout
    assert "turns committing what the player did not accept: 0" in result.stdout
    report = json.loads(out.read_text())
    assert report["target"]["provider"] == "offline"
    assert [s["name"] for s in report["scenarios"]] == ["greeting"]


def test_bad_arguments_are_one_line_errors(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text("scenarios:\n  - name: x\n    player: p\n    steps:\n      - say: hi\n")
    for args, expected in [
        (["--offline", "--scenarios", str(broken)], "the first step must open an encounter"),
        (["--offline", "--only", "nope"], "unknown scenario 'nope'"),
        (["--offline", "--provider", "llama-cpp"], "cannot be combined"),
    ]:
        result = subprocess.run(
            [sys.executable, "-m", "starharness.cli", "eval", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1, result.stderr
        assert expected in result.stderr


async def test_the_report_so_far_is_handed_out_after_every_scenario(tmp_path: Path) -> None:
    # A long run on a slow model writes its report after each scenario: a stopped run keeps it.
    scenarios = load_scenarios(default_scenarios()).only(["greeting", "buy"])
    settings = EvalSettings(Target("offline"), offline=True, turn_timeout_s=30)
    seen: list[list[str]] = []
    lines: list[str] = []
    await run_eval(
        settings,
        scenarios,
        tmp_path,
        lines.append,
        on_scenario=lambda report: seen.append([s.name for s in report.scenarios]),
    )
    assert seen == [["greeting"], ["greeting", "buy"]]
    assert "  buy: task done, 3 turn(s)" in lines, lines
