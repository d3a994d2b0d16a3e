"""bench/group_turn.py runs end to end with tiny counts (no timing is asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "group_turn.py"


def test_the_group_turn_bench_prints_both_figures_and_the_ratio(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--rounds", "1", "--turns", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    # Every group turn was two NPC lines (one answered the other), every single turn one.
    assert "4 scene lines (ok 4: two NPC lines per group turn), 2 single-NPC lines" in out, out
    assert re.search(r"^  group turn:  CPU per NPC line +\d+ us", out, re.M), out
    assert re.search(r"^  single turn: CPU per NPC line +\d+ us", out, re.M), out
    assert re.search(r"^ratio group/single: CPU per NPC line \d+\.\d\dx", out, re.M), out


def test_the_group_turn_bench_refuses_a_count_below_one(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--turns", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 2 and "at least 1" in done.stderr
