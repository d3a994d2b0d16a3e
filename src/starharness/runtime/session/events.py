"""The immutable session event and the freezing of its JSON data."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import StarHarnessError


class SessionDataError(StarHarnessError, ValueError):
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


class _Frozen(FrozenDict):
    """A FrozenDict made by freezing: frozen JSON all the way down, so it is reused as it is.

    Anyone can build a FrozenDict around a list; only the freezing walk builds these.
    """

    __slots__ = ()


EMPTY: Mapping[str, Any] = _Frozen()

_new_object = object.__new__
_set_seq = SessionEvent.__dict__["seq"].__set__
_set_time = SessionEvent.__dict__["time"].__set__
_set_type = SessionEvent.__dict__["type"].__set__
_set_data = SessionEvent.__dict__["data"].__set__


def new_event(seq: int, time: int, type: str, data: Mapping[str, Any]) -> SessionEvent:
    """`SessionEvent(seq, time, type, data)` at about half the cost, for the append path.

    A frozen dataclass's __init__ sets each field through object.__setattr__; writing the
    slots through their descriptors is the same thing with less lookup.
    """
    event = _new_object(SessionEvent)
    _set_seq(event, seq)
    _set_time(event, time)
    _set_type(event, type)
    _set_data(event, data)
    return event


def freeze_data(data: Mapping[str, Any], *, where: str = "data") -> Mapping[str, Any]:
    """A deep, read-only copy of JSON-able `data`; raises SessionDataError naming the bad spot.

    Data this function already froze is immutable and comes back as it is, without a copy.
    """
    kind = type(data)
    if kind is _Frozen:
        return data
    # A dict first: the ABC check costs about as much as freezing a small one.
    if kind is not dict and not isinstance(data, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise SessionDataError(f"{where} must be a mapping, not {kind.__name__}")
    try:
        return _freeze_mapping(data)
    except _NotJson as bad:
        path = "".join(reversed(bad.path))
        raise SessionDataError(f"{where}{path} {bad.reason}") from None


def freeze_event_data(event_type: str, data: Mapping[str, Any]) -> Mapping[str, Any]:
    """`freeze_data` for the data of an `event_type` event (errors say `<type> data...`)."""
    kind = type(data)
    if kind is _Frozen:
        return data
    if kind is dict or isinstance(data, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
        try:
            return _freeze_mapping(data)
        except _NotJson as bad:
            path = "".join(reversed(bad.path))
            raise SessionDataError(f"{event_type} data{path} {bad.reason}") from None
    raise SessionDataError(f"{event_type} data must be a mapping, not {kind.__name__}")


class _NotJson(Exception):
    """Raised deep inside the walk; the path is collected on the way out (only on failure)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        self.path: list[str] = []


_READY = frozenset({str, int, bool, type(None), _Frozen})
"""Value types taken as they are: immutable JSON scalars and mappings frozen before."""


def _freeze_mapping(value: Mapping[str, object]) -> _Frozen:
    # The usual data, string keys over ready values and plain nested dicts, is frozen in one
    # pass with the copies made in C; anything else takes the general walk.
    ready = _READY
    nested: dict[str, Any] | None = None
    for key, item in value.items():
        kind = type(item)
        if kind in ready and type(key) is str:
            continue
        if kind is not dict or type(key) is not str:
            return _freeze_items(value)
        try:
            frozen = _freeze_any_mapping(item)
        except _NotJson as bad:
            bad.path.append(f"[{key!r}]")
            raise
        if nested is None:
            nested = {}
        nested[key] = frozen
    return _Frozen(value if nested is None else {**value, **nested})


def _freeze_items(value: Mapping[Any, Any]) -> _Frozen:
    frozen: dict[str, Any] = {}
    ready = _READY
    for key, item in value.items():
        if type(key) is not str:
            if not isinstance(key, str):
                raise _NotJson(
                    f"has a key {key!r} of type {type(key).__name__}; JSON keys are strings"
                )
            key = str.__str__(key)
        if type(item) in ready:
            frozen[key] = item
            continue
        try:
            frozen[key] = _freeze(item)
        except _NotJson as bad:
            bad.path.append(f"[{key!r}]")
            raise
    return _Frozen(frozen)


def _freeze(value: object) -> Any:
    kind = type(value)
    if kind in _READY:
        return value
    if kind is dict:
        return _freeze_any_mapping(value)
    if kind is list or kind is tuple:
        return _freeze_any_array(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return value if kind is float else float.__float__(value)
        raise _NotJson(f"is {value!r}; JSON numbers must be finite")
    if isinstance(value, Mapping):
        return _freeze_mapping(value)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(value, list | tuple):
        return _freeze_array(value)  # pyright: ignore[reportUnknownArgumentType]
    # Subclasses (str/int enums and the like) become the plain value JSON would store.
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    raise _NotJson(f"is a {kind.__name__}, which JSON cannot hold")


def _freeze_array(array: list[Any] | tuple[Any, ...]) -> tuple[Any, ...]:
    items: list[Any] = []
    for index, item in enumerate(array):
        try:
            items.append(_freeze(item))
        except _NotJson as bad:
            bad.path.append(f"[{index}]")
            raise
    return tuple(items)


# The same functions typed for values whose kind was checked with type(): no cast() calls on
# the hot path.
_freeze_any_mapping: Callable[[Any], _Frozen] = _freeze_mapping
_freeze_any_array: Callable[[Any], tuple[Any, ...]] = _freeze_array


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
