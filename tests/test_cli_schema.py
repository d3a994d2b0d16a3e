"""`star-harness schema`: the frame schema of a game, with its own moods and attitude range."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

TINYGAME = Path(__file__).resolve().parent / "npc" / "tinygame"


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "starharness.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_default_is_the_sample_games_schema() -> None:
    result = _cli("schema")
    assert result.returncode == 0, result.stderr
    schema = json.loads(result.stdout)
    assert "pleased" in schema["$defs"]["Mood"]["enum"]
    docs = Path(__file__).resolve().parents[1] / "docs" / "frames.schema.json"
    assert result.stdout == docs.read_text(encoding="utf-8")


def test_a_game_by_path_gets_its_own_moods_and_range(tmp_path: Path) -> None:
    shutil.copytree(TINYGAME, tmp_path / "mygame", ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "out" / "frames.json"
    out.parent.mkdir()
    result = _cli("schema", "--game", "./mygame:GAME", "--out", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    definitions = json.loads(out.read_text(encoding="utf-8"))["$defs"]
    assert definitions["Mood"]["enum"] == ["calm", "happy", "cross"]
    assert (definitions["Attitude"]["minimum"], definitions["Attitude"]["maximum"]) == (-10, 10)
    assert definitions["Options"]["properties"]["items"]["maxItems"] == 3


def test_a_bad_game_is_one_line(tmp_path: Path) -> None:
    result = _cli("schema", "--game", "nowhere_to_be_found:GAME", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("error: schema: cannot import the game module")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr
