"""Gossip on the world clock: each day, NPCs who share a place or a route pass on what they
know about players (`npc.social.plan_gossip`), each pass a memory of the listener, attributed
to the teller, and a row of the audit."""

from __future__ import annotations

import math

from starharness.npc import AuditRecord
from starharness.npc.social import GossipPass, Hearsay, acquaintances, attributed, plan_gossip

from ..content.social import GOSSIP_ACTION, GOSSIP_MEMORY
from .rows import Memory
from .transaction import WorldTx

CANDIDATES = 16
"""The newest memories about players an NPC weighs telling on one day: a day's gossip reads a
bounded number of rows however long the NPC has lived."""


def spread_gossip(tx: WorldTx, day: int, *, place: str | None = None) -> list[GossipPass]:
    """Plan and store one day's gossip inside the clock's transaction; returns the passes.

    With `place`, one more round among the pairs with someone at that place (the director's
    `spread_word`), seeded apart from the clock's round of the day."""
    rules = tx.social.gossip
    npcs = {npc.id: npc for npc in tx.npcs() if npc.alive}
    places = {npc_id: npc.location_id for npc_id, npc in npcs.items()}
    routes = [
        (route.seller_id, route.to_id)
        for location in tx.locations()
        for route in tx.routes_from(location.id)
    ]
    pairs = acquaintances(places, routes)
    if place is not None:
        pairs = tuple(pair for pair in pairs if place in (places[pair[0]], places[pair[1]]))
    least = math.ceil(max(1, rules.floor) / rules.decay)
    talkers = sorted({npc_id for pair in pairs for npc_id in pair})
    held = {
        memory.id: memory for npc_id in talkers for memory in tx.tellable(npc_id, least, CANDIDATES)
    }
    if not held:
        return []
    hearsay = [
        Hearsay(m.npc_id, m.id, m.origin_id or m.id, m.about_id, m.importance, m.hops, m.text)
        for m in held.values()
    ]
    known = tx.holders({h.origin_id for h in hearsay})
    passes = plan_gossip(pairs, hearsay, known, rules, day, salt=place or "")
    for told in passes:
        teller = npcs[told.teller_id]
        source = held[told.memory_id]
        text = attributed(teller.name, told.text)
        tx.remember_heard(
            Memory(0, told.listener_id, told.about_id, day, GOSSIP_MEMORY, text, source.action,
                   source.good_id, source.qty, source.price, None, importance=told.importance,
                   source_id=told.teller_id, hops=told.hops, origin_id=told.origin_id)
        )  # fmt: skip
        tx.record_audit(
            AuditRecord(
                action=GOSSIP_ACTION,
                actor_id=told.teller_id,
                target_id=told.listener_id,
                arguments={
                    "about_id": told.about_id,
                    "memory_id": told.memory_id,
                    "origin_id": told.origin_id,
                    "importance": told.importance,
                    "hops": told.hops,
                    "location_id": place,
                },
                ok=True,
                reason=None,
                summary=text,
            )
        )
    return passes
