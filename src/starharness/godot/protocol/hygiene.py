"""Parameter hygiene: every string and array that crosses the wire is bounded."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

MAX_STRING_CHARS: Final = 4_096
MAX_ARRAY_ITEMS: Final = 512
# Deeper than any method needs; it keeps a hostile value from exhausting the recursion below.
MAX_NESTING: Final = 8


def hygiene_problem(params: Mapping[str, object]) -> str | None:
    """Describe the first out-of-bounds parameter (naming it), or None when all are fine."""
    for name, value in params.items():
        problem = _value_problem(name, value, 0)
        if problem is not None:
            return problem
    return None


def _value_problem(where: str, value: object, depth: int) -> str | None:
    if depth > MAX_NESTING:
        return f"{where}: nested deeper than {MAX_NESTING} levels"
    if value is None or isinstance(value, bool | int):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where}: must be a finite number"
    if isinstance(value, str):
        if len(value) > MAX_STRING_CHARS:
            return f"{where}: string of {len(value)} characters exceeds {MAX_STRING_CHARS}"
        return None
    if isinstance(value, list | tuple):
        return _array_problem(where, value, depth)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(value, Mapping):
        return _object_problem(where, value, depth)  # pyright: ignore[reportUnknownArgumentType]
    return f"{where}: {type(value).__name__} is not a JSON value"


def _array_problem(where: str, items: list[object] | tuple[object, ...], depth: int) -> str | None:
    if len(items) > MAX_ARRAY_ITEMS:
        return f"{where}: array of {len(items)} items exceeds {MAX_ARRAY_ITEMS}"
    for index, item in enumerate(items):
        problem = _value_problem(f"{where}[{index}]", item, depth + 1)
        if problem is not None:
            return problem
    return None


def _object_problem(where: str, mapping: Mapping[object, object], depth: int) -> str | None:
    if len(mapping) > MAX_ARRAY_ITEMS:
        return f"{where}: object of {len(mapping)} keys exceeds {MAX_ARRAY_ITEMS}"
    for key, item in mapping.items():
        if not isinstance(key, str):
            return f"{where}: object keys must be strings"
        if len(key) > MAX_STRING_CHARS:
            return f"{where}: key of {len(key)} characters exceeds {MAX_STRING_CHARS}"
        problem = _value_problem(f"{where}.{key}", item, depth + 1)
        if problem is not None:
            return problem
    return None
