"""A table of named items in layers: the global layer, then agent layers that shadow it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

from .effects import Disposer, once

if TYPE_CHECKING:
    from .context import Context

V = TypeVar("V")


class LayeredTable(Generic[V]):
    """name -> item per layer; registrations belong to the registering context's scope.

    Tools and prompt sections share this: an item lives in the layer of the context that added
    it (global for plugins, an agent's own layer for an agent context) until that scope closes.
    """

    __slots__ = ("_error", "_kind", "layers", "version")

    def __init__(self, kind: str, error: type[Exception]) -> None:
        self._kind = kind
        self._error = error
        self.layers: dict[Context | None, dict[str, V]] = {}
        # Bumped on every change, so views can tell that what they resolved is stale.
        self.version = 0

    def add(self, ctx: Context | None, name: str, item: V) -> Disposer:
        """Put `item` in `ctx`'s layer until the returned disposer (or `ctx`'s scope) runs."""
        layer = ctx.layer if ctx is not None else None
        taken = self.layers.get(layer)
        if taken is not None and name in taken:
            where = "the global layer" if layer is None else f"the layer of {layer.name!r}"
            raise self._error(f"{self._kind} {name!r} is already registered in {where}")

        remove = _Removal(self, layer, name, item)
        disposer = ctx.scope.add(remove) if ctx is not None else once(remove)
        self.layers.setdefault(layer, {})[name] = item
        self.version += 1
        return disposer

    def has_layer(self, layer: Context | None) -> bool:
        return layer in self.layers

    def merged(self, chain: Sequence[Context | None]) -> dict[str, V]:
        """What `chain` (widest layer first) sees: later layers shadow earlier ones."""
        merged: dict[str, V] = {}
        for layer in chain:
            entries = self.layers.get(layer)
            if entries:
                merged.update(entries)
        return merged


class _Removal(Generic[V]):
    """Takes one item out of its layer if it is still the one there (one per registration)."""

    __slots__ = ("_item", "_layer", "_name", "_table")

    def __init__(self, table: LayeredTable[V], layer: Context | None, name: str, item: V) -> None:
        self._table = table
        self._layer = layer
        self._name = name
        self._item = item

    def __call__(self) -> None:
        table = self._table
        entries = table.layers.get(self._layer)
        if entries is None or entries.get(self._name) is not self._item:
            return
        del entries[self._name]
        if not entries:
            del table.layers[self._layer]
        table.version += 1
