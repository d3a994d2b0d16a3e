"""The three permission tiers and the one-step-at-a-time rule for widening them."""

from __future__ import annotations

from enum import StrEnum

from ..errors import StarHarnessError


class Tier(StrEnum):
    """How much of the machine a command may change, narrowest first."""

    READ_ONLY = "read-only"
    """Files are readable (secrets hidden); only a private temp folder is writable."""
    WORKSPACE_WRITE = "workspace-write"
    """As read-only, and the project folder is writable."""
    FULL = "full"
    """No file confinement at all; the network is still off unless allowed per command."""

    @property
    def rank(self) -> int:
        return _ORDER.index(self)


_ORDER = (Tier.READ_ONLY, Tier.WORKSPACE_WRITE, Tier.FULL)


class EscalationRefusedError(StarHarnessError):
    """A request to widen the tier that is refused without asking anyone."""


def check_escalation(current: Tier, requested: Tier, ceiling: Tier = Tier.FULL) -> bool:
    """True when moving to `requested` widens the tier by exactly one step (a person must approve).

    False when it narrows or keeps the tier (no approval needed). Raises EscalationRefusedError
    for a request that skips a tier or goes above `ceiling`.
    """
    step = requested.rank - current.rank
    if step <= 0:
        return False
    if requested.rank > ceiling.rank:
        raise EscalationRefusedError(
            f"the tier {requested} is above the highest this configuration allows ({ceiling})"
        )
    if step > 1:
        between = _ORDER[current.rank + 1]
        raise EscalationRefusedError(
            f"cannot widen the sandbox from {current} to {requested} in one step; ask for "
            f"{between} first (each step needs its own approval)"
        )
    return True
