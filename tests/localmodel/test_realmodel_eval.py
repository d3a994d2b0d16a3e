"""`star-harness eval` on SmolLM2 as a smoke test: it finishes and writes a full report.

CI's real-model run stays short: the six scenarios it always ran (greeting, buy, refusal, haggle,
memory, injection), not every shipped one; `star-harness eval` with no `--only` runs them all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from realmodel_support import ServedModel

from starharness.eval import default_scenarios, load_scenarios

pytestmark = [pytest.mark.realmodel, pytest.mark.slow]

CI_SCENARIOS = ("greeting", "buy", "unaffordable-buy", "haggle", "return-visit", "prompt-injection")


def test_eval_on_smollm2_writes_a_report_for_every_scenario(
    real_model: ServedModel, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["STAR_HARNESS_HOME"] = str(tmp_path / "home")
    command = [sys.executable, "-m", "starharness.cli", "eval", "--provider", "llama-cpp"]
    command += ["--base-url", real_model.base_url, "--out", str(out), "--turn-timeout", "240"]
    for name in CI_SCENARIOS:
        command += ["--only", name]
    result = subprocess.run(
        command,
        env=env,
        capture_output=True,
        text=True,
        timeout=2400,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    with capsys.disabled():
        print("\n" + result.stdout)
    report = json.loads(out.read_text())
    shipped = [s.name for s in load_scenarios(default_scenarios()).scenarios]
    assert set(CI_SCENARIOS) <= set(shipped)
    expected = [name for name in shipped if name in CI_SCENARIOS]
    assert [s["name"] for s in report["scenarios"]] == expected
    assert all(s["turns"] for s in report["scenarios"])
    summary = report["summary"]
    assert summary["turns"] == sum(len(s["turns"]) for s in report["scenarios"])
    assert summary["world_ok"] is True
    assert set(summary["rules"]) >= {"spoke_via_action", "no_false_claims", "in_persona"}
    # llama-cpp declares no streamed open tool choice and no tool results: the NPC runs the
    # decide-act-speak plan, whose every request names the tool it forces, so no request
    # needs adapting (before, every step was forced to speak and the NPC could not act).
    assert all(
        turn["quirks"] == []
        for scenario in report["scenarios"]
        for turn in scenario["turns"]
        if turn["errors"] == []
    )
    # Task success and every rule are measured and printed, not asserted: a 135M model on a
    # loaded machine fails many of them (docs/eval-report-2026-12-01-smollm2-135m.md).
    assert set(summary["task_success"]) == {"model", "passed", "scenarios", "share"}
    assert summary["task_success"]["scenarios"] == sum(
        1 for s in report["scenarios"] if s["expected"] is not None
    )
    assert {"nothing_raw", "numbers_grounded"} <= set(summary["rules"])
