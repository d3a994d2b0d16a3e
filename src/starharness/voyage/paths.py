"""Where the Omega station world lives by default."""

from __future__ import annotations

from pathlib import Path

from starharness.runtime import star_harness_home


def default_world_path() -> Path:
    """`$STAR_HARNESS_HOME/voyage/world.db` (by default under ~/.star-harness)."""
    return star_harness_home() / "voyage" / "world.db"
