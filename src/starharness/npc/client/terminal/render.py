"""Frame contents in plain words: HUD lines and changes, and what an error code means."""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import JsonValue

from ...frames import ErrorCode, OfferTerms

ERROR_WORDS: Mapping[ErrorCode, str] = {
    ErrorCode.BAD_FRAME: "the harness could not read what this client sent",
    ErrorCode.BAD_OPTION: "that option is no longer on offer",
    ErrorCode.UNKNOWN_ENCOUNTER: "that conversation is already over",
    ErrorCode.ENCOUNTER_EXISTS: "that conversation is already open",
    ErrorCode.BUSY: "they are still answering; wait for them",
    ErrorCode.UNKNOWN_NPC: "nobody here goes by that name",
    ErrorCode.UNKNOWN_PLAYER: "the harness does not know this player",
    ErrorCode.NPC_UNAVAILABLE: "they do not respond",
    ErrorCode.LLM_UNAVAILABLE: "no answer: the model could not be reached, try again later",
    ErrorCode.UNAUTHORIZED: "the harness wants a token or an allowed origin",
    ErrorCode.FORBIDDEN: "this connection may not do that (another player, or the world clock)",
    ErrorCode.LIMIT: "too much at once: the harness hit one of its limits",
    ErrorCode.INTERNAL: "the harness had an internal fault",
}
"""What each error code means to a player, in a few words."""


def error_words(code: ErrorCode, message: str) -> str:
    """One line for an `error` frame: the plain meaning, then the harness's own message."""
    detail = f" ({message})" if message else ""
    return f"{ERROR_WORDS[code]}{detail}"


def offer_words(number: int, label: str, terms: OfferTerms) -> str:
    """An offer as one option line: what it is, what the player gives, how to accept it.

    Picking an offer commits a trade, so its line says so instead of reading like a reply.
    """
    cost = f" — you give {terms.cost}" if terms.cost.strip() else ""
    return f"[offer] {label}{cost}  (type {number} to accept)"


def accepted_words(label: str, terms: OfferTerms) -> str:
    """What the client prints when the player picks an offer."""
    cost = f" for {terms.cost}" if terms.cost.strip() else ""
    return f"You accept: {label}{cost}."


_NOT_SHOWN = frozenset({"playerId", "news"})
"""Who the view is for (the client knows) and the news (printed as news lines)."""


def flatten_hud(
    data: Mapping[str, JsonValue], names: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Nested HUD objects as dotted keys with printable values, in the harness's order.

    Common shapes read as words: a place `{id, name, ...}` as its name, a hold `[{name, qty}]` as
    "5 × rope", and ids in `names` (NPC ids from `welcome`) as those names.
    """
    flat: dict[str, str] = {}
    shown = {key: value for key, value in data.items() if key not in _NOT_SHOWN}
    _flatten_into(flat, "", shown, names or {})
    return flat


def hud_summary(data: Mapping[str, JsonValue], names: Mapping[str, str] | None = None) -> str:
    """The whole HUD on one line: `key value · key value`."""
    flat = flatten_hud(data, names)
    return " · ".join(f"{key} {value}" for key, value in flat.items()) or "(empty)"


def hud_changes(
    before: Mapping[str, JsonValue] | None,
    after: Mapping[str, JsonValue],
    names: Mapping[str, str] | None = None,
) -> list[str]:
    """What changed between two HUDs, one `key: old -> new` per changed value."""
    old = flatten_hud(before or {}, names)
    new = flatten_hud(after, names)
    changes: list[str] = []
    for key, value in new.items():
        previous = old.get(key)
        if previous is None:
            changes.append(f"{key}: {value}")
        elif previous != value:
            changes.append(f"{key}: {previous} → {value}")
    changes.extend(f"{key}: gone" for key in old if key not in new)
    return changes


def _flatten_into(
    flat: dict[str, str], prefix: str, data: Mapping[str, JsonValue], names: Mapping[str, str]
) -> None:
    for key, value in data.items():
        name = f"{prefix}{names.get(key, key)}"
        if isinstance(value, dict) and "id" in value and isinstance(value.get("name"), str):
            # Something with an id and a name (a place, a person) reads as its name; the rest
            # of it (a description, who is there) is for richer clients.
            flat[name] = _printable(value["name"])
        elif isinstance(value, dict) and value:
            _flatten_into(flat, f"{name}.", value, names)
        elif isinstance(value, list) and not value:
            flat[name] = "none"
        elif isinstance(value, list) and all(_is_lot(item) for item in value):
            flat[name] = ", ".join(_lot(item) for item in value)
        else:
            flat[name] = _printable(value)


def _is_lot(item: JsonValue) -> bool:
    return isinstance(item, dict) and "qty" in item and ("name" in item or "goodId" in item)


def _lot(item: JsonValue) -> str:
    assert isinstance(item, dict)
    return f"{_printable(item['qty'])} × {_printable(item.get('name') or item.get('goodId'))}"


def _printable(value: JsonValue) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
