"""Finding a game from `--game`: `package.module:attr`, or a path such as `./mygame:GAME`."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from ..runtime.errors import StarHarnessError
from .game import Game

DEFAULT_ATTRIBUTE = "GAME"
"""The attribute a spec without `:attr` names."""


class GameLoadError(StarHarnessError, LookupError):
    """`--game module:attr` names nothing that is a Game; the message says why."""


def load_game(spec: str) -> Game[Any]:
    """The Game named by `spec`: a Game, or a function without arguments making one.

    `package.module:attr` is imported from the Python path, then from the current directory;
    `./dir/mygame:GAME` (any spec whose module part is a path) imports the package or .py file
    at that path, with its parent folder put first on the Python path. Without `:attr` the
    attribute is `GAME`, the name `new-game` and the sample game use.
    """
    module_part, colon, attribute = spec.rpartition(":")
    if not colon:
        module_part, attribute = spec, DEFAULT_ATTRIBUTE
    if not module_part or not attribute:
        raise GameLoadError(
            f"a game is named 'package.module[:attribute]' or './path/to/package[:attribute]' "
            f"(the attribute defaults to {DEFAULT_ATTRIBUTE}), got {spec!r}"
        )
    module = _import(module_part)
    found: object = module
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise GameLoadError(_no_attribute(module_part, attribute, module)) from None
    if not isinstance(found, Game) and callable(found):
        found = found()
    if not isinstance(found, Game):
        raise GameLoadError(f"{spec!r} is a {type(found).__name__}, not a starharness.npc.Game")
    game: Game[Any] = found  # pyright: ignore[reportUnknownVariableType]
    return game


def _no_attribute(module_part: str, attribute: str, module: ModuleType) -> str:
    games = sorted(
        name
        for name, value in vars(module).items()
        if isinstance(value, Game) and not name.startswith("_")
    )
    missing = f"the game module {module_part!r} has no attribute {attribute!r}"
    default = f"(a spec without ':attribute' means :{DEFAULT_ATTRIBUTE})"
    if games:
        return (
            f"{missing} {default}; it holds {', '.join(games)}: name one after a colon, "
            f"e.g. --game {module_part}:{games[0]}"
        )
    return (
        f"{missing} {default}, nor any other Game object; name the attribute holding the "
        "Game (or a function making one) after a colon"
    )


def is_path_spec(module_part: str) -> bool:
    """Whether the module part of a spec is a file-system path rather than a dotted name."""
    return "/" in module_part or "\\" in module_part or module_part.endswith(".py")


def _import(module_part: str) -> ModuleType:
    if is_path_spec(module_part):
        return _import_path(Path(module_part))
    try:
        return _import_name(module_part)
    except ModuleNotFoundError as exc:
        top = module_part.split(".")[0]
        here = Path.cwd()
        if exc.name != top or not _importable_from(here, top):
            raise GameLoadError(
                f"cannot import the game module {module_part!r}: {exc}. It is looked up on the "
                f"Python path and in the current directory ({here}); for a package elsewhere "
                f"give its path, e.g. --game ./{top}:GAME"
            ) from None
    # A console script's Python path does not hold the current directory; a game package
    # sitting there is what someone who just made one means.
    sys.path.insert(0, str(Path.cwd()))
    return _import_name(module_part)


def _import_path(path: Path) -> ModuleType:
    target = path.expanduser().resolve()
    if target.suffix == ".py" and target.is_file():
        name = target.stem
    elif target.is_dir() and (target / "__init__.py").is_file():
        name = target.name
    else:
        raise GameLoadError(
            f"the game path {str(path)!r} is neither a package folder (with __init__.py) "
            "nor a .py file"
        )
    if not name.isidentifier():
        raise GameLoadError(f"the game at {str(path)!r}: {name!r} is not a Python module name")
    loaded = sys.modules.get(name)
    if loaded is not None and not _comes_from(loaded, target):
        raise GameLoadError(
            f"the game at {str(path)!r} is called {name!r}, which is already another module "
            f"({getattr(loaded, '__file__', '?')}); rename its folder"
        )
    parent = str(target.parent)
    if parent not in sys.path:
        sys.path.insert(0, parent)
    return _import_name(name)


def _import_name(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        raise
    except Exception as exc:
        raise GameLoadError(
            f"importing the game module {name!r} failed: {type(exc).__name__}: {exc}"
        ) from None


def _importable_from(folder: Path, top: str) -> bool:
    return (folder / top / "__init__.py").is_file() or (folder / f"{top}.py").is_file()


def _comes_from(module: ModuleType, target: Path) -> bool:
    file = getattr(module, "__file__", None)
    if file is None:
        return False
    origin = Path(file).resolve()
    return origin == target or origin.parent == target
