"""One world test, both stores: where a test's Omega station world lives, opened alike."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starharness.runtime.session.postgres import PostgresTarget
from starharness.voyage import VoyageWorld, open_server_world, open_world
from starharness.voyage.content import OMEGA_STATION, WorldSeed


@dataclass(frozen=True)
class WorldPlace:
    """A world in a SQLite file or a PostgreSQL database (schema `voyage`)."""

    kind: str
    path: Path | None = None
    target: PostgresTarget | None = None

    def open(self, *, seed: WorldSeed = OMEGA_STATION, **options: Any) -> VoyageWorld:
        if self.target is not None:
            return open_server_world(self.target, seed=seed, **options)
        assert self.path is not None
        return open_world(self.path, seed=seed, **options)

    def cli_args(self) -> list[str]:
        """`--world ...` naming this world on a command line."""
        if self.target is not None:
            password = self.target.password_env or ""
            return ["--world", self.target.url, "--world-password-env", password]
        return ["--world", str(self.path)]

    def locator(self) -> list[str]:
        """Arguments that let a child process open the same world (see CHILD_OPEN)."""
        if self.target is not None:
            return ["postgresql", self.target.url, self.target.password_env or ""]
        return ["sqlite", str(self.path)]


CHILD_OPEN = """
from starharness.runtime.session.postgres import PostgresTarget
from starharness.voyage import open_server_world, open_world

def open_from_argv(args, **options):
    if args[0] == "postgresql":
        return open_server_world(PostgresTarget(args[1], args[2] or None), **options)
    return open_world(__import__("pathlib").Path(args[1]), **options)
"""
"""Source of `open_from_argv(args)` for a child process given `WorldPlace.locator()`."""
