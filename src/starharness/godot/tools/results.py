"""Rendering a result for the model, capped so one call cannot flood its context."""

from __future__ import annotations

import json
from typing import Final

from pydantic import JsonValue

RESULT_CHAR_CAP: Final = 200_000


def truncation_marker(total: int, cap: int) -> str:
    """The note that ends a truncated result."""
    return (
        f"\n…[truncated: the result had {total} characters and only the first part fits in "
        f"{cap}; narrow the request (a smaller max_depth or limit, a sub-folder, the next "
        "cursor) to see the rest]"
    )


def render_result(result: JsonValue, cap: int = RESULT_CHAR_CAP) -> tuple[str, bool]:
    """Result as JSON text of at most `cap` characters, and whether it was truncated."""
    text = json.dumps(result, ensure_ascii=False, indent=1)
    if len(text) <= cap:
        return text, False
    marker = truncation_marker(len(text), cap)
    return text[: max(0, cap - len(marker))] + marker, True
