"""Writes happen only in transactions; a failure anywhere rolls back every write before it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from starharness.npc.world import ActionHost, AuditRecord, GameWorld
from starharness.voyage import VoyageWorld, WorldTx
from starharness.voyage.content import DOCK_MASTER, OMEGA, PLAYER_ID, SMUGGLER
from starharness.voyage.memory_hooks import record_visit
from starharness.voyage.store import (
    InsufficientCargoError,
    InsufficientCreditsError,
    InsufficientStockError,
    TransactionStateError,
    UnknownEntityError,
)


@pytest.fixture
def world(placed_world: VoyageWorld) -> VoyageWorld:
    """Every test here runs on SQLite and on PostgreSQL."""
    return placed_world


class Boom(Exception):
    pass


def _sell_fuel(tx: WorldTx, qty: int, total: int) -> None:
    """A trade as an action would write it: credits both ways, two cargo rows, the exchange."""
    tx.transfer_credits(PLAYER_ID, SMUGGLER, total)
    tx.move_cargo(SMUGGLER, PLAYER_ID, "fuel", qty)
    tx.adjust_stock(OMEGA, "fuel", -qty)


def _state(world: VoyageWorld) -> tuple[int, int, int, int, int]:
    with world.snapshot() as r:
        return (
            r.credits(PLAYER_ID),
            r.credits(SMUGGLER),
            r.cargo_qty(PLAYER_ID, "fuel"),
            r.cargo_qty(SMUGGLER, "fuel"),
            r.stock(OMEGA, "fuel"),
        )


def test_world_implements_the_framework_protocols(world: VoyageWorld) -> None:
    assert isinstance(world, GameWorld)
    assert isinstance(world, ActionHost)


def test_a_trade_commits_all_its_writes(world: VoyageWorld) -> None:
    before = _state(world)
    with world.transaction() as tx:
        _sell_fuel(tx, 5, 2_250)
    assert _state(world) == (
        before[0] - 2_250,
        before[1] + 2_250,
        before[2] + 5,
        before[3] - 5,
        before[4] - 5,
    )


def test_an_exception_after_some_writes_rolls_them_all_back(world: VoyageWorld) -> None:
    before = _state(world)
    with pytest.raises(Boom), world.transaction() as tx:
        _sell_fuel(tx, 5, 2_250)
        tx.remember(SMUGGLER, PLAYER_ID, "Sold them fuel.")
        raise Boom
    assert _state(world) == before
    with world.snapshot() as reader:
        assert reader.memories(SMUGGLER, PLAYER_ID) == []


def test_a_trade_the_buyer_cannot_afford_leaves_nothing_half_done(world: VoyageWorld) -> None:
    before = _state(world)
    with pytest.raises(InsufficientCreditsError) as caught, world.transaction() as tx:
        tx.move_cargo(SMUGGLER, PLAYER_ID, "fuel", 5)  # goods first, payment second
        tx.add_credits(PLAYER_ID, -90_000)
    assert (caught.value.have, caught.value.need) == (12_000, 90_000)
    assert "12,000" in str(caught.value) and "90,000" in str(caught.value)
    assert _state(world) == before


def test_helpers_refuse_to_go_below_zero(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        with pytest.raises(InsufficientCargoError) as cargo:
            tx.move_cargo(SMUGGLER, PLAYER_ID, "fuel", 41)
        assert (cargo.value.have, cargo.value.need) == (40, 41)
        with pytest.raises(InsufficientStockError):
            tx.adjust_stock(OMEGA, "fuel", -201)
        with pytest.raises(ValueError, match="qty must be zero or more"):
            tx.move_cargo(SMUGGLER, PLAYER_ID, "fuel", -3)
        with pytest.raises(ValueError, match="price must be positive"):
            tx.set_price(OMEGA, "fuel", 0)
        with pytest.raises(UnknownEntityError, match="no good with id 'unobtainium'"):
            tx.add_cargo(PLAYER_ID, "unobtainium", 1)
        with pytest.raises(UnknownEntityError, match="no actor with id 'nobody'"):
            tx.add_credits("nobody", 5)
        assert tx.cargo_qty(SMUGGLER, "fuel") == 40


def test_attitude_is_clamped_to_its_bounds(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        assert tx.adjust_attitude(SMUGGLER, PLAYER_ID, 250) == 100
        assert tx.adjust_attitude(SMUGGLER, PLAYER_ID, -30) == 70
        assert tx.set_attitude(DOCK_MASTER, PLAYER_ID, -400) == -100
    assert world.attitude(SMUGGLER, PLAYER_ID) == 70
    assert world.attitude(DOCK_MASTER, PLAYER_ID) == -100


def test_emptying_a_hold_removes_the_row(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        tx.move_cargo(SMUGGLER, PLAYER_ID, "spice", 6)
        assert "spice" not in tx.cargo(SMUGGLER)
        assert tx.cargo(PLAYER_ID) == {"spice": 6}


def test_a_transaction_cannot_be_used_after_it_ends(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        pass
    with pytest.raises(TransactionStateError, match="has ended"):
        tx.add_credits(PLAYER_ID, 1)


def test_transactions_do_not_nest(world: VoyageWorld) -> None:
    with (
        world.transaction(),
        pytest.raises(TransactionStateError, match="already open"),
        world.transaction(),
    ):
        pass
    assert world.has_player(PLAYER_ID)


def test_audit_rows_go_with_their_transaction(world: VoyageWorld) -> None:
    accepted = AuditRecord(
        "sell", SMUGGLER, PLAYER_ID, {"good": "fuel", "qty": 5}, True, None, "sold"
    )
    lost = AuditRecord("sell", SMUGGLER, PLAYER_ID, {"qty": 9}, True, None, "rolled back")
    refused = AuditRecord("sell", SMUGGLER, PLAYER_ID, {"qty": 500}, False, "stock", None)
    with world.transaction() as tx:
        world.audit(tx, accepted)
    with pytest.raises(Boom), world.transaction() as tx:
        world.audit(tx, lost)
        raise Boom
    world.audit(None, refused)
    with world.snapshot() as reader:
        log = reader.audit_log()
    assert [(e.ok, e.reason, e.arguments) for e in log] == [
        (False, "stock", {"qty": 500}),
        (True, None, {"good": "fuel", "qty": 5}),
    ]


def test_is_alive_reads_inside_the_transaction(world: VoyageWorld) -> None:
    with world.transaction() as tx:
        assert world.is_alive(tx, SMUGGLER)
        tx.set_alive(SMUGGLER, False)
        assert not world.is_alive(tx, SMUGGLER)
        assert not world.is_alive(tx, "nobody")
    with pytest.raises(TransactionStateError, match="expected a transaction of this VoyageWorld"):
        world.is_alive(object(), SMUGGLER)


@dataclass(frozen=True)
class _Op:
    kind: str
    amount: int


_ops = st.lists(
    st.builds(
        _Op,
        st.sampled_from(["pay", "refund", "buy", "return", "restock", "drain"]),
        st.integers(min_value=0, max_value=30_000),
    ),
    max_size=25,
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=_ops)
def test_no_sequence_of_writes_breaks_the_books(world: VoyageWorld, ops: list[_Op]) -> None:
    """Credits are conserved, and no balance, hold or stock ever goes negative."""
    with world.snapshot() as r:
        money = r.credits(PLAYER_ID) + r.credits(SMUGGLER)
        fuel = r.cargo_qty(PLAYER_ID, "fuel") + r.cargo_qty(SMUGGLER, "fuel")
    for op in ops:
        qty = op.amount % 60
        try:
            with world.transaction() as tx:
                if op.kind == "pay":
                    tx.transfer_credits(PLAYER_ID, SMUGGLER, op.amount)
                elif op.kind == "refund":
                    tx.transfer_credits(SMUGGLER, PLAYER_ID, op.amount)
                elif op.kind == "buy":
                    tx.move_cargo(SMUGGLER, PLAYER_ID, "fuel", qty)
                    tx.transfer_credits(PLAYER_ID, SMUGGLER, qty * 450)
                elif op.kind == "return":
                    tx.move_cargo(PLAYER_ID, SMUGGLER, "fuel", qty)
                elif op.kind == "restock":
                    tx.adjust_stock(OMEGA, "fuel", qty)
                else:
                    tx.adjust_stock(OMEGA, "fuel", -qty * 5)
        except (InsufficientCreditsError, InsufficientCargoError, InsufficientStockError):
            pass
        with world.snapshot() as r:
            assert r.credits(PLAYER_ID) >= 0 and r.credits(SMUGGLER) >= 0
            assert r.credits(PLAYER_ID) + r.credits(SMUGGLER) == money
            assert r.cargo_qty(PLAYER_ID, "fuel") >= 0 and r.cargo_qty(SMUGGLER, "fuel") >= 0
            assert r.cargo_qty(PLAYER_ID, "fuel") + r.cargo_qty(SMUGGLER, "fuel") == fuel
            assert r.stock(OMEGA, "fuel") >= 0


def test_a_memory_of_or_by_nobody_is_refused_and_a_visit_by_nobody_is_not_stored(
    world: VoyageWorld,
) -> None:
    with world.transaction() as tx:
        with pytest.raises(UnknownEntityError, match="no actor with id 'nobody'"):
            tx.remember("nobody", PLAYER_ID, "They came by.")
        with pytest.raises(UnknownEntityError, match="no actor with id 'ghost'"):
            tx.remember(SMUGGLER, "ghost", "They came by.")
        assert tx.remember(SMUGGLER, SMUGGLER, "I talked to myself.").about_id == SMUGGLER
    card = world.npc(SMUGGLER)
    assert card is not None
    record_visit(world, card, "ghost", [])
    record_visit(world, card, PLAYER_ID, [])
    with world.snapshot() as reader:
        assert reader.count_memories(SMUGGLER, "ghost") == 0
        assert reader.count_memories(SMUGGLER, PLAYER_ID) == 1
