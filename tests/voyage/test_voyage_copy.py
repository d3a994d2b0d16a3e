"""Omega station is a package you can copy: a renamed copy serves its own content."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import starharness.voyage

VOYAGE = Path(starharness.voyage.__file__).resolve().parent
PROBE = """
import sys
from starharness.npc import load_game
game = load_game(sys.argv[1])
world = game.open_world(__import__("pathlib").Path(sys.argv[2]))
print(sorted(card.name for card in world.npcs()))
print(sys.modules[type(world).__module__].__file__)
"""


def _absolute_game_imports(package: Path) -> list[str]:
    found: list[str] = []
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            found += [f"{path.name}: {n}" for n in names if n.startswith("starharness.voyage")]
    return found


def test_the_game_imports_itself_only_relatively() -> None:
    assert _absolute_game_imports(VOYAGE) == []


def test_a_copied_game_serves_its_own_npcs(tmp_path: Path) -> None:
    copy = tmp_path / "omega2"
    shutil.copytree(VOYAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    seed = copy / "content" / "seed.py"
    seed.write_text(seed.read_text(encoding="utf-8").replace("Jonah Karsk", "Jonah Copy"))
    result = subprocess.run(
        [sys.executable, "-P", "-c", PROBE, "./omega2:GAME", str(tmp_path / "w.db")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    names, store = result.stdout.splitlines()
    assert "Jonah Copy" in names and "Jonah Karsk" not in names
    assert Path(store).is_relative_to(copy)
