"""Folding an NPC's memories of someone into a fixed budget, deterministically.

The newest memories that are more than trivia are quoted (trivia only when nothing weightier
is left); the rest become totals. Nothing is dropped silently: every memory is either quoted or
counted, the first and the last deal are always named, and a ledger line totals every credit
that changed hands, however small the budget.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from starharness.npc.social import estimate_tokens, is_trivia

from .rows import Memory

TRADE = "trade"


@dataclass(frozen=True, slots=True)
class MemoryBudget:
    """How much room the memories get in a scene: `tokens` (estimated the conservative way of
    `npc.social.estimate_tokens`) when the game sets it, else `chars`."""

    chars: int = 640
    verbatim: int = 4
    text_chars: int = 110
    tokens: int | None = None

    def fits(self, text: str) -> bool:
        if self.tokens is not None:
            return estimate_tokens(text) <= self.tokens
        return len(text) <= self.chars


@dataclass(frozen=True, slots=True)
class _Style:
    verbatim: int
    text_chars: int
    deal_lines: int | None
    quote_firsts: bool


@dataclass(slots=True)
class _Totals:
    count: int = 0
    qty: int = 0
    price: int = 0


def summarise_memories(
    memories: Sequence[Memory],
    goods: Mapping[str, str],
    budget: MemoryBudget | None = None,
) -> str:
    """Render memories (oldest first) as text within the budget when at all possible.

    goods maps good ids to display names. The result always states how many memories there are
    (a folded row counts as the `weight` memories it stands for).
    """
    budget = budget or MemoryBudget()
    if not memories:
        return "You have never dealt with them."
    fallback = ""
    for style in _styles(budget, min(budget.verbatim, len(memories))):
        text = _render(memories, goods, style)
        if budget.fits(text):
            return text
        fallback = text
    return fallback


@lru_cache(maxsize=64)
def _styles(budget: MemoryBudget, most_verbatim: int) -> tuple[_Style, ...]:
    """Every rendering, most detailed first; the first that fits the budget wins.

    Cached: the list depends on nothing else, and every scene would build it anew.
    """
    styles: list[_Style] = []
    for verbatim in range(most_verbatim, 0, -1):
        for text_chars in (budget.text_chars, 60):
            for deal_lines in (None, 3, 1):
                for quote_firsts in (True, False):
                    styles.append(_Style(verbatim, text_chars, deal_lines, quote_firsts))
    return tuple(styles)


def _render(memories: Sequence[Memory], goods: Mapping[str, str], style: _Style) -> str:
    quoted = _quoted(memories, style.verbatim)
    older = [memory for memory in memories if memory.id not in quoted]
    recent = [memory for memory in memories if memory.id in quoted]
    lines = [f"{_count(memories)} memories since day {memories[0].day}."]
    ledger = _ledger(memories)
    if ledger:
        lines.append(ledger)
    if older:
        lines.append("Earlier: " + _fold(older, goods, style))
    trades = [memory for memory in memories if memory.kind == TRADE]
    if trades and trades[-1].id not in {memory.id for memory in recent}:
        lines.append(f"Last deal: day {trades[-1].day}, {_deal(trades[-1], goods)}.")
    lines.extend(f"- day {m.day}: {_clip(m.text, style.text_chars)}" for m in recent)
    return "\n".join(lines)


def _quoted(memories: Sequence[Memory], count: int) -> set[int]:
    """The ids of the newest `count` memories that are more than trivia, topped up with the
    newest trivia when there are fewer: a deal outlives any number of idle visits."""
    # A folded row is a total, not something that happened: it is counted, never quoted.
    single = [memory for memory in memories if memory.weight == 1]
    weighty = [memory.id for memory in single if not is_trivia(memory.importance)]
    chosen = weighty[len(weighty) - count :] if count else []
    if len(chosen) < count:
        trivia = [memory.id for memory in single if is_trivia(memory.importance)]
        chosen += trivia[len(trivia) - (count - len(chosen)) :]
    return set(chosen)


def _ledger(memories: Sequence[Memory]) -> str:
    """Every credit that changed hands, by kind (and for deals by direction), in one line."""
    groups: dict[tuple[str, str], _Totals] = {}
    for memory in memories:
        if not memory.price:
            continue
        key = (memory.kind, memory.action or "")
        totals = groups.setdefault(key, _Totals())
        totals.count += memory.weight
        totals.qty += memory.qty or 0
        totals.price += memory.price
    parts: list[str] = []
    for (kind, action), totals in sorted(groups.items()):
        if kind == TRADE and action:
            parts.append(
                f"they {action} {totals.qty:,} units for {totals.price:,} ({totals.count} deals)"
            )
        else:
            what = f"{kind} {action}" if action else kind
            parts.append(f"{what} {totals.price:,} ({totals.count})")
    return ("Money, all told: " + "; ".join(parts) + ".") if parts else ""


def _fold(older: Sequence[Memory], goods: Mapping[str, str], style: _Style) -> str:
    parts: list[str] = []
    trades = [memory for memory in older if memory.kind == TRADE]
    if trades:
        parts.append(_fold_trades(trades, goods, style))
    by_kind: dict[str, list[Memory]] = {}
    for memory in older:
        if memory.kind != TRADE:
            by_kind.setdefault(memory.kind, []).append(memory)
    for kind in sorted(by_kind):
        parts.append(_fold_kind(kind, by_kind[kind], style))
    return "; ".join(parts) + "."


def _fold_trades(trades: Sequence[Memory], goods: Mapping[str, str], style: _Style) -> str:
    groups: dict[tuple[str, str], _Totals] = {}
    for trade in trades:
        key = (trade.action or "traded", trade.good_id or "goods")
        totals = groups.setdefault(key, _Totals())
        totals.count += trade.weight
        totals.qty += trade.qty or 0
        totals.price += trade.price or 0
    ranked = sorted(groups.items(), key=lambda item: (-item[1].price, item[0]))
    shown = ranked if style.deal_lines is None else ranked[: style.deal_lines]
    rest = ranked[len(shown) :]
    lines = [
        f"they {action} {totals.qty:,} {goods.get(good, good)} for {totals.price:,}"
        for (action, good), totals in shown
    ]
    if rest:
        deals = sum(totals.count for _, totals in rest)
        credits = sum(totals.price for _, totals in rest)
        lines.append(f"{len(rest)} more kinds of deal ({deals} deals, {credits:,} in total)")
    first = trades[0]
    return (
        f"{_count(trades)} deals ({', '.join(lines)}); "
        f"first deal day {first.day}: {_deal(first, goods)}"
    )


def _fold_kind(kind: str, memories: Sequence[Memory], style: _Style) -> str:
    text = f"{_count(memories)} {kind} memories"
    paid = sum(memory.price or 0 for memory in memories)
    if paid:
        text += f" ({paid:,} credits)"
    if style.quote_firsts:
        first = memories[0]
        text += f', first day {first.day}: "{_clip(first.text, 50)}"'
    return text


def _count(memories: Sequence[Memory]) -> int:
    return sum(memory.weight for memory in memories)


def _deal(trade: Memory, goods: Mapping[str, str]) -> str:
    good = goods.get(trade.good_id or "", trade.good_id or "goods")
    return f"they {trade.action or 'traded'} {trade.qty or 0:,} {good} for {trade.price or 0:,}"


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
