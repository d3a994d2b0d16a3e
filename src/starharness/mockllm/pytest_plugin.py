"""pytest fixture `mock_llm`: a started MockLlmServer on an ephemeral loopback port.

Use it from a conftest with `from starharness.mockllm.pytest_plugin import mock_llm`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from .server import MockLlmServer


@pytest_asyncio.fixture
async def mock_llm() -> AsyncIterator[MockLlmServer]:
    """A running mock, closed (stalled connections included) when the test ends."""
    async with MockLlmServer() as mock:
        yield mock
