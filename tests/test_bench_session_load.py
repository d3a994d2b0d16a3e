"""bench/session_load.py runs end to end with tiny counts (no timing is asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "session_load.py"


@pytest.mark.slow
def test_session_load_bench_prints_each_cost_and_the_ratio(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--sessions", "2", "--turns", "2", "--runs", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    # Two sessions of a header and two tool-using turns: 1 + 2 * 29 events each.
    assert "2 sessions, 118 events" in out, out
    for cost in ("floor", "load", "project"):
        assert re.search(rf"^  {cost} .* \d+\.\d\d us$", out, re.M), out
    assert re.search(r"^ratio load/floor: \d+\.\d\dx$", out, re.M), out
