"""bench/sandbox.py runs end to end with a tiny count (no timing is asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "sandbox.py"


@pytest.mark.slow
def test_sandbox_bench_prints_a_line_per_backend(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--calls", "3"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        check=False,
    )
    # 1 means the bubblewrap goal was missed, which three calls on a busy machine may do.
    assert done.returncode in (0, 1), done.stdout + done.stderr
    for name in ("bubblewrap", "bubblewrap (network approved)", "landlock"):
        line = re.search(rf"^  {re.escape(name)} +(.+)$", done.stdout, re.M)
        assert line is not None, done.stdout
        assert "unavailable" in line.group(1) or re.search(
            r"extra +-?\d+\.\d+ ms +ratio +\d+\.\d+x", line.group(1)
        ), line.group(1)
