"""A session event type declared with the TypedDict of its data, and the check of stored data.

Each event type is one `EventKind`: the string the log holds, tied to its payload TypedDict.
Writers hand `Agent.log` / `Session.log` a kind and data of its TypedDict, readers call
`payload(event, kind)`, so pyright checks a field's name and type where it is written and where
it is read.

Data is checked against its kind's TypedDict where it comes from storage: a store's decoder
calls `stored_data` once per loaded event (a pydantic TypeAdapter per kind, built on first use).
Data appended in this process is typed by construction and is not checked again, so the append
path and in-process reads pay nothing. A stored event whose type no kind declared when it was
loaded (its declaring module was imported later) is marked unchecked, and `payload` checks it
when it is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from pydantic import TypeAdapter, ValidationError

from .errors import StoredEventError
from .events import FrozenDict, SessionDataError, freeze_data, thaw

if TYPE_CHECKING:
    from .events import SessionEvent

D = TypeVar("D", bound=Mapping[str, Any])

_KINDS: dict[str, EventKind[Any]] = {}
_SHOWN_INPUT = 80
"""At most this many characters of a bad value are quoted in an error."""


class EventKind(str, Generic[D]):
    """A session event type (the string in the log) and the TypedDict of its data.

    A str, so `event.type == TURN_END`, sets of types and `match` work as they do on the plain
    name; `name` is that plain name, which is what events hold. Each name is declared once.
    """

    name: str
    shape: type[D]
    _adapter: TypeAdapter[D] | None

    def __new__(cls, name: str, shape: type[D]) -> EventKind[D]:
        if name in _KINDS:
            raise ValueError(f"session event type {name!r} is declared twice")
        self = super().__new__(cls, name)
        self.name = name
        self.shape = shape
        self._adapter = None
        _KINDS[name] = self
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickling rebuilds a kind by its name: a second declaration would be refused.
        return (kind_named, (self.name,))

    def check(self, data: object, where: str) -> None:
        """Raise StoredEventError naming `where`, this type and the first bad field, when `data`
        (plain JSON: dicts and lists) does not fit this kind's TypedDict. Extra keys are allowed."""
        adapter = self._adapter
        if adapter is None:
            adapter = self._adapter = TypeAdapter(self.shape)
        try:
            adapter.validate_python(data, strict=True)
        except ValidationError as exc:
            raise StoredEventError(f"{where} ({self.name}): {_problem(exc)}") from None


def kind_named(name: str) -> EventKind[Any]:
    """The declared kind of an event type; KeyError when no imported module declares it."""
    return _KINDS[name]


def declared_kinds() -> tuple[EventKind[Any], ...]:
    """Every kind declared so far (by the modules imported so far), in declaration order."""
    return tuple(_KINDS.values())


class _Unchecked(FrozenDict):
    """Frozen stored data of a type no kind declared when it was loaded (checked on read)."""

    __slots__ = ()


def stored_data(event_type: str, parsed: dict[str, Any], where: str) -> Mapping[str, Any]:
    """Frozen event data read back from a store, checked against its kind's TypedDict.

    Raises StoredEventError (naming `where`, the type and the field) when it does not fit, and
    SessionDataError when it is not plain JSON.
    """
    kind = _KINDS.get(event_type)
    if kind is None:
        return _Unchecked(freeze_data(parsed))
    kind.check(parsed, where)
    return freeze_data(parsed)


def payload(event: SessionEvent, kind: EventKind[D]) -> D:
    """`event.data` as `kind`'s TypedDict (no copy). Raises SessionDataError when the event is
    of another type, StoredEventError when it is stored data of an undeclared-at-load type that
    does not fit."""
    data = event.data
    if event.type != kind:
        raise SessionDataError(f"event {event.seq} is a {event.type} event, read as {kind.name}")
    if type(data) is _Unchecked:
        kind.check(thaw(data), f"event {event.seq}")
    return cast(D, data)


def _problem(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    first = errors[0]
    where = "data" + "".join(f"[{part!r}]" for part in first["loc"])
    if first["type"] == "missing":
        text = f"{where} is missing"
    else:
        shown = repr(first.get("input"))
        if len(shown) > _SHOWN_INPUT:
            shown = shown[: _SHOWN_INPUT - 3] + "..."
        text = f"{where}: {first['msg']}, got {shown}"
    more = len(errors) - 1
    return text if more == 0 else f"{text} (and {more} more problem{'s' if more > 1 else ''})"
