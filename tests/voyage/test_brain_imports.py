"""The offline brain must play from the request alone: it may not import the world store.

This is the import-linter contract the brain would have in pyproject.toml, enforced by walking
import statements with `ast`, directly and transitively through our own modules (the same graph
import-linter builds: a module imports what its statements name, not its parent packages).
"""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

import starharness

SRC = Path(starharness.__file__).resolve().parent.parent
BRAIN = "starharness.voyage.brain"
FORBIDDEN = ("starharness.voyage.store", "starharness.voyage.actions", "sqlite3")


def _file_of(module: str, src: Path) -> Path | None:
    base = src.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported(module: str, path: Path, src: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            found.add(target)
            for alias in node.names:
                if _file_of(f"{target}.{alias.name}", src) is not None:
                    found.add(f"{target}.{alias.name}")
    return found


def forbidden_chains(roots: list[str], src: Path, forbidden: tuple[str, ...]) -> list[str]:
    """Every import chain from a root module to a forbidden one, as `a -> b -> c`."""
    queue: deque[tuple[str, tuple[str, ...]]] = deque((root, (root,)) for root in roots)
    seen: set[str] = set()
    chains: list[str] = []
    while queue:
        module, chain = queue.popleft()
        if module in seen:
            continue
        seen.add(module)
        path = _file_of(module, src)
        if path is None:
            continue
        for target in sorted(_imported(module, path, src)):
            if any(target == bad or target.startswith(bad + ".") for bad in forbidden):
                chains.append(" -> ".join((*chain, target)))
            elif target.split(".")[0] in {p.name for p in src.iterdir()}:
                queue.append((target, (*chain, target)))
    return chains


def _modules_under(package: str, src: Path) -> list[str]:
    folder = src.joinpath(*package.split("."))
    names: list[str] = []
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_the_brain_never_imports_the_store() -> None:
    roots = _modules_under(BRAIN, SRC)
    assert f"{BRAIN}.respond" in roots
    assert forbidden_chains(roots, SRC, FORBIDDEN) == []


def test_the_walk_finds_direct_and_indirect_store_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "fakegame"
    (pkg / "brain").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "store.py").write_text("import sqlite3\n")
    (pkg / "helpers.py").write_text("from . import store\n")
    (pkg / "brain" / "__init__.py").write_text("from .think import think\n")
    (pkg / "brain" / "think.py").write_text("from ..helpers import nothing\nimport json\n")
    chains = forbidden_chains(["fakegame.brain"], tmp_path, ("fakegame.store",))
    assert chains == [
        "fakegame.brain -> fakegame.brain.think -> fakegame.helpers -> fakegame.store"
    ]
    assert forbidden_chains(["fakegame.store"], tmp_path, ("sqlite3",)) == [
        "fakegame.store -> sqlite3"
    ]
