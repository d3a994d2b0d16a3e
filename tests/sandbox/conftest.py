"""Sandbox fixtures: a fake user on a real disk (home with secrets, project, outside)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sandbox_support import Machine, machine_at


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> Iterator[Machine]:
    with machine_at(monkeypatch) as found:
        yield found
