"""bench/session_stores.py runs end to end with tiny counts against the test server (no timing
is asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from starharness.runtime.session.postgres import PostgresTarget

BENCH = Path(__file__).resolve().parents[1] / "bench" / "session_stores.py"


@pytest.mark.slow
def test_session_stores_bench_prints_both_stores_and_the_ratio(
    pg_target: PostgresTarget, tmp_path: Path
) -> None:
    tiny = ["--sessions", "4", "--rounds", "2", "--per-round", "3"]
    if pg_target.password_env:
        tiny += ["--password-env", pg_target.password_env]
    done = subprocess.run(
        [sys.executable, str(BENCH), *tiny, "--url", pg_target.url],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    for store in ("sqlite", "postgresql"):
        assert re.search(rf"^  {store} +[\d,]+ events/s durable .*\(24 events\)$", out, re.M), out
    assert re.search(r"^ratio postgresql/sqlite: \d+\.\d\dx events/s", out, re.M), out
    assert "PostgreSQL at postgresql://127.0.0.1:" in out and "star@" not in out
