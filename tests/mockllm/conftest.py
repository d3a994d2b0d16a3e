"""Fixtures for the mock LLM tests: the server fixture and a plain httpx client."""

from collections.abc import AsyncIterator

import httpx
import pytest_asyncio

__all__ = ["http"]


@pytest_asyncio.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    """A plain httpx client with short timeouts (stall tests rely on them)."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(5.0, read=2.0)) as client:
        yield client
