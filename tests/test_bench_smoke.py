"""bench/runtime_overhead.py runs end to end with tiny counts (no timing is asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "runtime_overhead.py"


@pytest.mark.slow
def test_runtime_overhead_bench_completes_and_prints_the_ratio(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--turns", "6", "--agents", "4"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    out = done.stdout
    # 0: goals met, 1: a goal missed (likely with so few turns); 2 or a crash: broken.
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "floor and loop send the same messages, tools and options: yes" in out
    ratios = re.findall(
        r"^ratio loop/floor at concurrency (\d+): CPU per turn (\d+\.\d+)x", out, re.M
    )
    assert [concurrency for concurrency, _ in ratios] == ["1", "4"], out
    assert all(float(ratio) > 0 for _, ratio in ratios)
    rows = [line for line in out.splitlines() if re.match(r"^  (floor|loop) ", line)]
    assert len(rows) == 4, out
    assert all("ok (6/6 turns, 6 tool runs, 12 requests)" in row for row in rows), out
    assert re.search(r"^memory per idle agent: \d+\.\d KB \(4 agents", out, re.M), out
    assert "schema shared: yes" in out
