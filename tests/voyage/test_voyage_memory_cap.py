"""A pair's memories stay bounded: old ones fold into weighted totals, nothing is lost."""

from __future__ import annotations

from starharness.voyage import VoyageWorld
from starharness.voyage.content import PLAYER_ID, SMUGGLER
from starharness.voyage.store.folding import KEEP, SLACK

GOODS = ("fuel", "medgel", "spice")


def _remember_many(world: VoyageWorld, count: int) -> tuple[int, int]:
    qty_total = price_total = 0
    for index in range(count):
        with world.transaction() as tx:
            if index == 7:
                tx.remember(SMUGGLER, PLAYER_ID, "Sold them the patrol times.", kind="intel",
                            ref="intel-patrols")  # fmt: skip
            elif index % 5 == 0:
                tx.remember(SMUGGLER, PLAYER_ID, "We met; no deal.", kind="visit")
            else:
                good, qty = GOODS[index % 3], 1 + index % 4
                tx.remember(
                    SMUGGLER, PLAYER_ID, f"They bought {qty} {good}.", kind="trade",
                    action="bought", good_id=good, qty=qty, price=qty * 100,
                )  # fmt: skip
                qty_total += qty
                price_total += qty * 100
    return qty_total, price_total


def test_old_memories_fold_into_totals_and_rows_stay_bounded(world: VoyageWorld) -> None:
    count = 3_000
    qty_total, price_total = _remember_many(world, count)
    with world.snapshot() as reader:
        rows = reader.memories(SMUGGLER, PLAYER_ID)
        # Each kind of memory (a visit, a trade per good) keeps its first row and one folded row;
        # the intel sale is never folded.
        assert len(rows) <= KEEP + SLACK + 2 * (1 + len(GOODS)) + 1
        assert sum(row.weight for row in rows) == count
        trades = [row for row in rows if row.kind == "trade"]
        assert sum(row.qty or 0 for row in trades) == qty_total
        assert sum(row.price or 0 for row in trades) == price_total
        # A memory that names an intel item is never folded: the sale is still found.
        assert reader.count_memories(SMUGGLER, PLAYER_ID, kind="intel", ref="intel-patrols") == 1
        assert reader.count_memories(SMUGGLER, PLAYER_ID) == count
        first = rows[0]
        assert (first.weight, first.text) == (1, "We met; no deal.")
    scene = world.scene(SMUGGLER, PLAYER_ID)
    assert f"{count} memories since day 1." in scene
    assert "first deal day 1: they bought 2 medical gel for 200" in scene


def test_a_few_memories_are_not_folded(world: VoyageWorld) -> None:
    _remember_many(world, KEEP + SLACK)
    with world.snapshot() as reader:
        rows = reader.memories(SMUGGLER, PLAYER_ID)
    assert len(rows) == KEEP + SLACK and {row.weight for row in rows} == {1}
