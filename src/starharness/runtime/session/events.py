"""The immutable session event and the freezing of its JSON data."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast


class SessionDataError(ValueError):
    """Event data that is not plain JSON (names where in the data the problem is)."""


@dataclass(frozen=True, slots=True)
class SessionEvent:
    """One entry of a session log: `seq` is its index, `time` epoch milliseconds.

    `data` is deeply frozen: mappings are FrozenDicts and arrays are tuples.
    """

    seq: int
    time: int
    type: str
    data: Mapping[str, Any]


def _refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise TypeError("session event data is immutable; thaw() gives a mutable copy")


class FrozenDict(dict[str, Any]):
    """A dict that refuses every change: the mappings inside event data.

    A dict subclass (not a mapping proxy) so the C JSON encoder writes it directly.
    """

    __slots__ = ()

    __setitem__ = _refuse
    __delitem__ = _refuse
    __ior__ = _refuse
    clear = _refuse
    pop = _refuse
    popitem = _refuse
    setdefault = _refuse
    update = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickle and copy would otherwise rebuild it item by item through __setitem__.
        return (FrozenDict, (dict(self),))

    def __repr__(self) -> str:
        return f"FrozenDict({super().__repr__()})"


EMPTY: Mapping[str, Any] = FrozenDict()


def freeze_data(data: Mapping[str, Any], *, where: str = "data") -> Mapping[str, Any]:
    """A deep, read-only copy of JSON-able `data`; raises SessionDataError naming the bad spot."""
    if not isinstance(data, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise SessionDataError(f"{where} must be a mapping, not {type(data).__name__}")
    try:
        return _freeze_mapping(data)
    except _NotJson as bad:
        raise SessionDataError(f"{where}{''.join(reversed(bad.path))} {bad.reason}") from None


class _NotJson(Exception):
    """Raised deep inside the walk; the path is collected on the way out (only on failure)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        self.path: list[str] = []


_PLAIN = frozenset({str, int, bool, type(None)})


def _freeze_mapping(value: Mapping[Any, Any]) -> Mapping[str, Any]:
    frozen: dict[str, Any] = {}
    for key, item in value.items():
        if type(key) is not str:
            if not isinstance(key, str):
                raise _NotJson(
                    f"has a key {key!r} of type {type(key).__name__}; JSON keys are strings"
                )
            key = str.__str__(key)
        if type(item) in _PLAIN:
            frozen[key] = item
            continue
        try:
            frozen[key] = _freeze(item)
        except _NotJson as bad:
            bad.path.append(f"[{key!r}]")
            raise
    return FrozenDict(frozen)


def _freeze(value: object) -> Any:
    kind = type(value)
    if kind in _PLAIN:
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value if kind is float else float.__float__(value)
        raise _NotJson(f"is {value!r}; JSON numbers must be finite")
    if isinstance(value, Mapping):
        return _freeze_mapping(value)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(value, list | tuple):
        items: list[Any] = []
        array = cast("list[Any] | tuple[Any, ...]", value)
        for index, item in enumerate(array):
            try:
                items.append(_freeze(item))
            except _NotJson as bad:
                bad.path.append(f"[{index}]")
                raise
        return tuple(items)
    # Subclasses (str/int enums and the like) become the plain value JSON would store.
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    raise _NotJson(f"is a {kind.__name__}, which JSON cannot hold")


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def data_to_json(data: Mapping[str, Any]) -> str:
    """Compact JSON text of frozen event data (the stored form)."""
    return _ENCODER.encode(data)


def thaw(value: Any) -> Any:
    """A mutable deep copy of frozen data: dicts and lists again."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, tuple):
        return [thaw(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
    return value
