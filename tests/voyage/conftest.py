"""Fixtures: a fresh Omega station world in a temporary directory, or in PostgreSQL.

`world` is a SQLite file; a test module that is not about SQLite's file format overrides it
with `placed_world`, which runs each test on SQLite and on PostgreSQL (the latter skips without
a test server, and fails so under CI; see tests/pg_support.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from starharness.runtime.session.postgres import PostgresTarget
from starharness.voyage import VoyageWorld, open_world
from world_support import WorldPlace


@pytest.fixture
def world_path(tmp_path: Path) -> Path:
    return tmp_path / "world.db"


@pytest.fixture
def world(world_path: Path) -> Iterator[VoyageWorld]:
    opened = open_world(world_path)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def world_place(request: pytest.FixtureRequest, tmp_path: Path) -> WorldPlace:
    if request.param == "sqlite":
        return WorldPlace("sqlite", path=tmp_path / "world.db")
    target: PostgresTarget = request.getfixturevalue("pg_target")
    return WorldPlace("postgresql", target=target)


@pytest.fixture
def placed_world(world_place: WorldPlace) -> Iterator[VoyageWorld]:
    opened = world_place.open()
    try:
        yield opened
    finally:
        opened.close()
