"""The web UI tests reuse the browser helpers of tests/web and the tiny game of tests/npc."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

_TESTS = Path(__file__).resolve().parents[1]
for folder in (_TESTS / "web", _TESTS / "npc", _TESTS / "protocol"):
    if str(folder) not in sys.path:
        sys.path.append(str(folder))

from starharness.mockllm import MockLlmServer  # noqa: E402


@pytest.fixture
async def mock() -> AsyncIterator[MockLlmServer]:
    async with MockLlmServer() as server:
        yield server
