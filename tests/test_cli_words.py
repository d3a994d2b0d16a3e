"""The command line's own words: `--version`, a port out of range, token counts in `eval`.

Each runs the real `star-harness` command in a subprocess, as a user would.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from starharness import __version__


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "starharness.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={"STAR_HARNESS_HOME": str(home), "PATH": "/usr/bin:/bin"},
    )


def test_version_prints_the_version(tmp_path: Path) -> None:
    result = _cli("--version", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"star-harness {__version__}\n"


@pytest.mark.parametrize("command", ["play", "serve"])
@pytest.mark.parametrize("port", ["99999", "-1", "65536"])
def test_a_port_out_of_range_is_a_port_error(tmp_path: Path, command: str, port: str) -> None:
    result = _cli(command, "--port", port, home=tmp_path)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Invalid value for '--port'" in result.stderr
    assert "65535" in result.stderr or "greater than or equal to 0" in result.stderr
    # Not the plugin row's config path that the port used to surface as.
    assert "row 'server'" not in result.stderr and "config.port" not in result.stderr


def test_eval_prints_token_counts_as_whole_numbers(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = _cli("eval", "--offline", "--only", "buy", "--out", str(out), home=tmp_path / "h")
    assert result.returncode == 0, result.stdout + result.stderr
    # The console wraps long lines: read the words, not the lines.
    words = " ".join(result.stdout.split())
    line = re.search(r"tokens per turn \(mean\): (\S+) in, (\S+) out", words)
    assert line is not None, words
    means = json.loads(out.read_text())["summary"]["tokens_per_turn"]
    for shown, mean in zip(line.groups(), (means["input"], means["output"]), strict=True):
        shown = shown.rstrip(";")
        assert re.fullmatch(r"\d{1,3}(,\d{3})*|n/a", shown), shown
        if mean is not None and shown != "n/a":
            assert int(shown.replace(",", "")) == round(mean)
