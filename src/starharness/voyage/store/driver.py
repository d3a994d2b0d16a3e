"""The seam between the store's SQL and a database: one open transaction's statements."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal, Protocol

Row = tuple[Any, ...]
Params = Sequence[Any]
Dialect = Literal["sqlite", "postgresql"]


class Driver(Protocol):
    """Runs the store's statements (written with `?` placeholders) on one connection."""

    @property
    def dialect(self) -> Dialect: ...

    def rows(self, sql: str, params: Params = ()) -> list[Row]:
        """Run one statement; its rows (none for a write without RETURNING)."""
        ...

    def many(self, sql: str, seq: Iterable[Params]) -> None:
        """Run one statement once per parameter tuple."""
        ...
