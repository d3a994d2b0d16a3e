"""Fixtures: a fresh Omega station world in a temporary directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from starharness.voyage import VoyageWorld, open_world


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
