"""Reading profile, bundle and patch files into their validated shapes."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.resources.abc import Traversable
from typing import Any, TypeVar

import yaml
from pydantic import TypeAdapter, ValidationError

from .errors import ProfileError

M = TypeVar("M")

_SUFFIXES = (".yml", ".yaml")


def read_yaml(source: Traversable, what: str) -> Any:
    """Parse one YAML file; a missing or malformed file is a ProfileError naming it."""
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ProfileError(f"{what} {source} does not exist") from None
    except UnicodeDecodeError as exc:
        raise ProfileError(
            f"{what} {source}: not UTF-8 text (byte {exc.start} is {exc.object[exc.start]:#04x}); "
            "YAML files are text"
        ) from None
    except OSError as exc:
        raise ProfileError(f"cannot read {what} {source}: {exc.strerror or exc}") from None
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        where = f" at line {exc.problem_mark.line + 1}" if exc.problem_mark else ""
        raise ProfileError(f"{what} {source}: invalid YAML{where}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise ProfileError(f"{what} {source}: invalid YAML: {exc}") from None


def validate(adapter: TypeAdapter[M], data: Any, where: str) -> M:
    """Validate `data`; the first problem becomes a one-line ProfileError naming the field."""
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        raise ProfileError(f"{where}: {describe_validation_error(exc)}") from None


def describe_validation_error(exc: ValidationError, prefix: str = "") -> str:
    """`field.path: message` for the first error, with a count of the others."""
    errors = exc.errors(include_url=False, include_input=False)
    # The deepest error is the most specific one (a union reports every member's failure).
    first = max(errors, key=lambda error: len(error["loc"]))
    path = format_loc((prefix, *first["loc"]) if prefix else first["loc"])
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{path or '(top level)'}: {first['msg']}{more}"


def format_loc(loc: Sequence[int | str]) -> str:
    """`bundles[1].rows[0].config` from pydantic's location tuple."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            # Tagged unions insert the member type's name; it means nothing to a user.
            if part in ("str", "InlineBundle"):
                continue
            text += f".{part}" if text else part
    return text


def find_named(name: str, folders: Sequence[Traversable]) -> Traversable | None:
    """The first `<folder>/<name>.yml` (or `.yaml`) that exists."""
    for folder in folders:
        for suffix in _SUFFIXES:
            candidate = folder.joinpath(name + suffix)
            if candidate.is_file():
                return candidate
    return None


def names_in(folders: Sequence[Traversable]) -> list[str]:
    """Names of the profiles found in `folders` (patch files excluded), sorted."""
    found: set[str] = set()
    for folder in folders:
        if not folder.is_dir():
            continue
        for entry in folder.iterdir():
            stem, dot, suffix = entry.name.rpartition(".")
            if dot and "." + suffix in _SUFFIXES and not stem.endswith(".patch"):
                found.add(stem)
    return sorted(found)
