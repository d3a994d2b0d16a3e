"""bench/lore.py runs end to end with tiny counts (no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "lore.py"


def test_the_lore_bench_prints_a_ratio_for_each_count(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--entries", "10", "300", "--lines", "5"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    # 1 (a goal missed) is possible on a loaded machine; 2 or a crash means it is broken.
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "bare SQLite primary-key lookup" in done.stdout
    assert "    300 entries:" in done.stdout and "ratio to 10:" in done.stdout


def test_the_lore_bench_refuses_a_count_below_one(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--entries", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 2 and "at least 1" in done.stderr
