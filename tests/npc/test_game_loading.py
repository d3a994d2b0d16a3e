"""`--game` finds a game by dotted name, from the current directory, or by path.

Each case runs in a fresh interpreter started with -P (no current directory on sys.path, like
the `star-harness` console script), so imports made here do not leak between cases.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TINYGAME = Path(__file__).resolve().parent / "tinygame"
LOAD = "import sys; from starharness.npc import load_game; print(load_game(sys.argv[1]).name)"


def _load(spec: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-c", LOAD, spec],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def mygame(tmp_path: Path) -> Path:
    """A copy of the tiny game as a package called mygame, in tmp_path/games."""
    target = tmp_path / "games" / "mygame"
    shutil.copytree(TINYGAME, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_a_package_in_the_current_directory_loads_by_name(mygame: Path) -> None:
    result = _load("mygame:GAME", mygame.parent)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "tinygame"


def test_a_package_loads_by_path(mygame: Path, tmp_path: Path) -> None:
    for spec in ("./games/mygame:GAME", f"{mygame}:GAME", "games/mygame:make_game"):
        result = _load(spec, tmp_path)
        assert result.returncode == 0, (spec, result.stderr)
        assert result.stdout.strip() == "tinygame"


def test_a_missing_module_says_where_it_looked_and_how_to_give_a_path(tmp_path: Path) -> None:
    result = _load("mygame:GAME", tmp_path)
    assert result.returncode != 0
    assert "cannot import the game module 'mygame'" in result.stderr
    assert str(tmp_path) in result.stderr and "--game ./mygame:GAME" in result.stderr


def test_a_path_that_is_no_package_is_named(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    result = _load("./notes:GAME", tmp_path)
    assert result.returncode != 0
    assert "neither a package folder" in result.stderr
