"""Omega station's social rules: what each kind of memory weighs, what happens in the open at
the bar, how word travels between the station, the Hollow and Ceres, and how much room an NPC's
memories of a player get in a scene."""

from __future__ import annotations

from types import MappingProxyType

from starharness.npc.social import GossipRules, WitnessRules

WITNESSED_MEMORY = "witnessed"
"""The kind of memory an NPC keeps of a deal it saw another NPC make with a player."""
GOSSIP_MEMORY = "gossip"
"""The kind of memory an NPC keeps of what another NPC told it about a player."""
GOSSIP_ACTION = "gossip"
"""The audit's name for one memory passed from one NPC to another."""

MEMORY_IMPORTANCE = MappingProxyType(
    {
        "quest": 80,  # a job given or done: money and a promise
        "trade": 60,
        "intel": 55,
        "travel": 30,  # a fare: not worth retelling (30 * 0.6 is below the floor)
        "attitude": 30,
        "note": 30,
        "visit": 10,  # came by and talked: trivia
    }
)
"""Importance (0..100) by memory kind; a kind not listed weighs DEFAULT_IMPORTANCE."""
DEFAULT_IMPORTANCE = 20

WITNESSES = WitnessRules(kinds=frozenset({"trade", "quest", "intel"}))
"""Deals and jobs happen across the bar; a change of mood or a private note does not."""

GOSSIP = GossipRules(seed="omega-station", per_pair=2, per_day=12, decay=0.6, floor=20)
"""A deal (60) is worth 36 to whoever hears it from the trader and 21 at the next hop; then
word stops. Crews on the station's routes carry it between the station, the Hollow and Ceres."""

MEMORY_TOKENS = 200
"""Room for an NPC's memories of one player in a scene: a small model's few hundred tokens."""
