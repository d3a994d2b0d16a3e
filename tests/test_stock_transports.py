"""STAR_HARNESS_STOCK_TRANSPORTS=1: stock httpx2 and uvicorn I/O, and the same tests still pass."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from starharness._fastio import ReusingTransport
from starharness.runtime.llm.transport import (
    STOCK_MAX_KEEPALIVE,
    STOCK_TRANSPORTS_ENV,
    llm_http_client,
)

ROOT = Path(__file__).resolve().parents[1]
_TIMEOUT = httpx2.Timeout(5.0)
_LIMITS = httpx2.Limits(max_connections=4)


async def test_the_setting_picks_the_stock_transports(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(STOCK_TRANSPORTS_ENV, raising=False)
    ours = llm_http_client(timeout=_TIMEOUT, limits=_LIMITS)
    assert isinstance(ours._transport, ReusingTransport)  # pyright: ignore[reportPrivateUsage]
    await ours.aclose()
    monkeypatch.setenv(STOCK_TRANSPORTS_ENV, "1")
    stock = llm_http_client(timeout=_TIMEOUT, limits=_LIMITS)
    assert isinstance(stock._transport, httpx2.AsyncHTTPTransport)  # pyright: ignore[reportPrivateUsage]
    await stock.aclose()


async def test_the_stock_pool_keeps_few_idle_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(STOCK_TRANSPORTS_ENV, "1")
    wide = httpx2.Limits(max_connections=200, max_keepalive_connections=200)
    stock = llm_http_client(timeout=_TIMEOUT, limits=wide)
    transport = stock._transport  # pyright: ignore[reportPrivateUsage]
    assert isinstance(transport, httpx2.AsyncHTTPTransport)
    pool = transport._pool  # pyright: ignore[reportPrivateUsage]
    assert pool._max_keepalive_connections == STOCK_MAX_KEEPALIVE  # pyright: ignore[reportPrivateUsage]
    assert pool._max_connections == 200  # pyright: ignore[reportPrivateUsage]
    await stock.aclose()


@pytest.mark.slow
def test_provider_and_server_tests_pass_on_the_stock_transports() -> None:
    """The provider's and the server's tests, run again in a process with the setting on."""
    env = {**os.environ, STOCK_TRANSPORTS_ENV: "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-x",
            "-p",
            "no:cacheprovider",
            "tests/runtime/test_llm_provider.py",
            "tests/npc/test_npc_server.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout
