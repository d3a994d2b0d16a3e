"""Writing a WorldSeed into freshly created tables."""

from __future__ import annotations

from ..content import WorldSeed
from .driver import Driver


def insert_seed(conn: Driver, seed: WorldSeed) -> None:
    """Insert the whole seed; call inside the write transaction that created the tables."""
    conn.rows("INSERT INTO clock (id, day) VALUES (1, ?)", (seed.start_day,))
    conn.many(
        "INSERT INTO locations (id, name, description) VALUES (?, ?, ?)",
        [(loc.id, loc.name, loc.description) for loc in seed.locations],
    )
    conn.many(
        "INSERT INTO goods (id, name, base_price, contraband) VALUES (?, ?, ?, ?)",
        [(good.id, good.name, good.base_price, int(good.contraband)) for good in seed.goods],
    )
    conn.many(
        "INSERT INTO market (location_id, good_id, price, stock, target_stock) "
        "VALUES (?, ?, ?, ?, ?)",
        [(m.location_id, m.good_id, m.price, m.stock, m.stock) for m in seed.market],
    )
    conn.many(
        "INSERT INTO actors (id, name, kind, archetype, location_id, alive, credits, persona) "
        "VALUES (?, ?, ?, ?, ?, 1, ?, ?)",
        [
            (a.id, a.name, a.kind, a.archetype, a.location_id, a.credits, a.persona)
            for a in seed.actors
        ],
    )
    conn.many(
        "INSERT INTO cargo (actor_id, good_id, qty) VALUES (?, ?, ?)",
        [(c.actor_id, c.good_id, c.qty) for c in seed.cargo if c.qty > 0],
    )
    conn.many(
        "INSERT INTO trade_lines (npc_id, good_id, sells, buys, restock_to) VALUES (?, ?, ?, ?, ?)",
        [(t.npc_id, t.good_id, int(t.sells), int(t.buys), t.restock_to) for t in seed.trade_lines],
    )
    conn.many(
        "INSERT INTO attitudes (npc_id, target_id, score) VALUES (?, ?, ?)",
        [(a.npc_id, a.target_id, a.score) for a in seed.attitudes],
    )
    conn.many(
        "INSERT INTO routes (from_id, to_id, seller_id, fare, days) VALUES (?, ?, ?, ?, ?)",
        [(r.from_id, r.to_id, r.seller_id, r.fare, r.days) for r in seed.routes],
    )
    conn.many(
        "INSERT INTO intel (id, npc_id, kind, title, text, price, min_attitude) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(i.id, i.npc_id, i.kind, i.title, i.text, i.price, i.min_attitude) for i in seed.intel],
    )
    conn.many(
        "INSERT INTO quests (id, giver_id, player_id, kind, title, good_id, qty, reward, "
        "min_attitude, status) VALUES (?, ?, NULL, 'deliver', ?, ?, ?, ?, ?, 'open')",
        [
            (q.id, q.giver_id, q.title, q.good_id, q.qty, q.reward, q.min_attitude)
            for q in seed.quests
        ],
    )
