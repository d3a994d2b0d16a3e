"""One import style: inside src/starharness a module imports its own package relatively.

(ruff's TID252 enforces the opposite style; its banned-api sees relative imports as absolute
ones, so this test is the rule.) Tests and benchmarks import the package by its name.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "starharness"


def _absolute_own_imports(path: Path, root: Path = SRC.parent) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        if any(name == "starharness" or name.startswith("starharness.") for name in names):
            found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


GAMES = (SRC / "voyage", SRC / "scaffold" / "starter")
"""Game packages a user copies out as their own (voyage) or that `new-game` copies (the
starter): they import starharness by name, as any game does, and only themselves relatively."""


def _game_of(path: Path) -> Path | None:
    return next((game for game in GAMES if game in path.parents), None)


def _imports_leaving(game: Path, path: Path) -> list[str]:
    """Relative imports in `path` that climb out of `game` (they break in a copy)."""
    depth = len(path.relative_to(game).parts) - 1  # folders between the game's root and path
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level > depth + 1:
            found.append(f"{path.relative_to(SRC.parent)}:{node.lineno}")
    return found


def test_src_imports_its_own_modules_relatively() -> None:
    offenders = [
        hit
        for path in sorted(SRC.rglob("*.py"))
        if _game_of(path) is None
        for hit in _absolute_own_imports(path)
    ]
    assert offenders == [], "use `from ..x import y` inside src/starharness: " + ", ".join(
        offenders
    )


def test_game_packages_import_the_framework_by_name() -> None:
    offenders = [
        hit
        for game in GAMES
        for path in sorted(game.rglob("*.py"))
        for hit in _imports_leaving(game, path)
    ]
    assert offenders == [], "a copyable game imports starharness by name: " + ", ".join(offenders)


def test_the_check_sees_absolute_imports_and_passes_relative_ones(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import starharness.composition\nfrom ..composition import load\n"
        "def f():\n    from starharness.composition import load\n",
        encoding="utf-8",
    )
    assert _absolute_own_imports(module, tmp_path) == ["m.py:1", "m.py:4"]
