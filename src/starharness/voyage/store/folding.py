"""Keeping a pair's memories bounded: old rows fold into one weighted row per kind of memory.

The summariser only ever needs totals of old memories (how many, units and credits per kind of
deal) and the very first one; the newest are quoted. So once an NPC has more than `KEEP` rows
about someone, the oldest beyond that (never the first, never one that names a quest or intel
item) merge into the second-oldest row of their (kind, action, good): its weight, qty and price
become the group's sums; the oldest of each stays as it was, so "the first deal" is still true.
A scene then reads at most a few dozen rows, at 10 memories or 100,000.
"""

from __future__ import annotations

from starharness.npc.social import TRIVIA

from .driver import Driver

KEEP = 8
"""Rows a pair keeps before folding (the newest are never folded)."""
SLACK = 8
"""Fold only once this many more have come, so folding runs once per SLACK memories."""
KEEP_WEIGHTY = 4
"""The newest rows above trivia a pair keeps unfolded, whatever came after them."""


def fold_old_memories(conn: Driver, npc_id: str, about_id: str) -> None:
    """Fold the pair's oldest foldable rows when it holds more than KEEP + SLACK; inside a tx."""
    count = int(
        conn.rows(
            "SELECT count(*) FROM memories WHERE npc_id = ? AND about_id = ?", (npc_id, about_id)
        )[0][0]
    )
    if count <= KEEP + SLACK:
        return
    rows = conn.rows(
        "SELECT id, kind, action, good_id, ref FROM memories "
        "WHERE npc_id = ? AND about_id = ? ORDER BY id LIMIT ?",
        (npc_id, about_id, count - KEEP + 1),
    )
    # The first memory stays as it is (the scene names the first deal); rows with a ref are
    # what quests and intel sales look up; the newest that are more than trivia stay quotable
    # however many idle visits came after them.
    weighty = {
        int(row[0])
        for row in conn.rows(
            "SELECT id FROM memories WHERE npc_id = ? AND about_id = ? AND importance > ? "
            "ORDER BY id DESC LIMIT ?",
            (npc_id, about_id, TRIVIA, KEEP_WEIGHTY),
        )
    }
    candidates = [row for row in rows[1:] if row[4] is None and int(row[0]) not in weighty]
    groups: dict[tuple[str, str | None, str | None], list[int]] = {}
    for memory_id, kind, action, good_id, _ref in candidates:
        groups.setdefault((kind, action, good_id), []).append(int(memory_id))
    for group in groups.values():
        ids = group[1:]
        if len(ids) < 2:
            continue
        keeper, others = ids[0], ids[1:]
        marks = ",".join("?" * len(ids))
        total = conn.rows(
            f"SELECT sum(weight), sum(qty), sum(price) FROM memories WHERE id IN ({marks})", ids
        )[0]
        # PostgreSQL sums bigints as numeric: store them back as integers.
        conn.rows(
            "UPDATE memories SET weight = ?, qty = ?, price = ? WHERE id = ?",
            (int(total[0]), _optional_int(total[1]), _optional_int(total[2]), keeper),
        )
        conn.rows(f"DELETE FROM memories WHERE id IN ({','.join('?' * len(others))})", others)


def _optional_int(value: object) -> int | None:
    return None if value is None else int(str(value))
