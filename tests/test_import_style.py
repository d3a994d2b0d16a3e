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


def test_src_imports_its_own_modules_relatively() -> None:
    # The new-game starter is a template copied into the user's own package: it imports
    # starharness by name, as any game does.
    starter = SRC / "scaffold" / "starter"
    offenders = [
        hit
        for path in sorted(SRC.rglob("*.py"))
        if starter not in path.parents
        for hit in _absolute_own_imports(path)
    ]
    assert offenders == [], "use `from ..x import y` inside src/starharness: " + ", ".join(
        offenders
    )


def test_the_check_sees_absolute_imports_and_passes_relative_ones(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import starharness.app\nfrom ..app import load\n"
        "def f():\n    from starharness.app import load\n",
        encoding="utf-8",
    )
    assert _absolute_own_imports(module, tmp_path) == ["m.py:1", "m.py:4"]
