"""`{{variable}}` templates, parsed once; rendering is strict about unknown names."""

from __future__ import annotations

import re
from collections.abc import Callable

from .errors import PromptError

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}")


class Template:
    """Text split into literal pieces and variable names (odd positions are names)."""

    __slots__ = ("names", "pieces")

    def __init__(self, pieces: list[str]) -> None:
        self.pieces = pieces
        self.names = frozenset(pieces[1::2])

    @staticmethod
    def parse(text: str) -> Template | None:
        """The template for `text`, or None when it has no variables (render it as is)."""
        if "{{" not in text:
            return None
        pieces = _PLACEHOLDER.split(text)
        if len(pieces) == 1:
            return None
        return Template(pieces)

    def render(self, lookup: Callable[[str], str | None], owner: str) -> str:
        """Fill in every variable; an unknown one raises PromptError naming it and `owner`."""
        out: list[str] = []
        for index, piece in enumerate(self.pieces):
            if index % 2 == 0:
                out.append(piece)
                continue
            value = lookup(piece)
            if value is None:
                raise PromptError(f"unknown variable {{{{{piece}}}}} in {owner}")
            out.append(value)
        return "".join(out)
