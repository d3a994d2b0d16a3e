"""Lore: what a game's NPCs may know, declared once, searched each turn with the database's own
full-text search, given within a budget and logged with the turn's dynamic context."""

from .declaration import DEFAULT_STOPWORDS, EVERYONE, Lore, LoreEntry, LoreError, LoreQuery
from .index import (
    COMMON_MATCHES,
    LoreDriver,
    MemoryLoreIndex,
    SqliteLoreDriver,
    install_lore,
    lore_is_current,
    search_lore,
)
from .recall import (
    LORE_CONTEXT,
    LORE_HEADING,
    LORE_ORDER,
    LoreRecall,
    SearchesLore,
    lore_lines,
    lore_search,
    query_for,
    recall,
    render_lore,
    within_budget,
)
from .words import fts5_match, search_words, websearch_text

__all__ = [
    "COMMON_MATCHES",
    "DEFAULT_STOPWORDS",
    "EVERYONE",
    "LORE_CONTEXT",
    "LORE_HEADING",
    "LORE_ORDER",
    "Lore",
    "LoreDriver",
    "LoreEntry",
    "LoreError",
    "LoreQuery",
    "LoreRecall",
    "MemoryLoreIndex",
    "SearchesLore",
    "SqliteLoreDriver",
    "fts5_match",
    "install_lore",
    "lore_is_current",
    "lore_lines",
    "lore_search",
    "query_for",
    "recall",
    "render_lore",
    "search_lore",
    "search_words",
    "websearch_text",
    "within_budget",
]
