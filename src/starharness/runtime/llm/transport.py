"""The HTTP client for model requests: httpx2, on its public API.

httpx2 is the maintained fork of httpx that the `openai` SDK and `mcp` run on. Its client is
used as documented; the one choice made here is the transport under it. By default that is
`starharness._fastio.ReusingTransport`, a keep-alive pool at O(1) per request built on
httpcore2's public connection class (httpx2's own pool walks every connection twice per
request, and most of fifty connections are idle at any moment). With
`STAR_HARNESS_STOCK_TRANSPORTS=1`, or a proxy configured in the environment, it is httpx2's own.
"""

from __future__ import annotations

import os
import urllib.request

import httpx2

from ..._fastio import ReusingTransport

STOCK_TRANSPORTS_ENV = "STAR_HARNESS_STOCK_TRANSPORTS"
"""Set to 1 to use stock httpx2 and uvicorn I/O instead of the `starharness._fastio` layers."""


def stock_transports() -> bool:
    """Whether `STAR_HARNESS_STOCK_TRANSPORTS` asks for the libraries' own transports.

    The fast paths (`starharness._fastio`) are replacements for a library's own transport;
    this setting is the way out when one misbehaves or a release of the library changes under it.
    """
    return os.environ.get(STOCK_TRANSPORTS_ENV, "").strip().lower() in ("1", "true", "yes")


STOCK_MAX_KEEPALIVE = 20
"""Idle connections httpx2's own pool may keep. Its work per request grows with the number of
its connections (it walks them all, polling each idle one's socket), so it keeps few."""


def llm_http_client(*, timeout: httpx2.Timeout, limits: httpx2.Limits) -> httpx2.AsyncClient:
    """An httpx2 client for model requests; blocking (it loads the CA bundle).

    With a proxy configured in the environment, or STAR_HARNESS_STOCK_TRANSPORTS set, httpx2's
    own transport is kept (it is the one that knows how to reach proxies), with at most
    `STOCK_MAX_KEEPALIVE` idle connections.
    """
    proxies = urllib.request.getproxies()
    if stock_transports() or any(scheme in proxies for scheme in ("http", "https", "all")):
        kept = min(limits.max_keepalive_connections or STOCK_MAX_KEEPALIVE, STOCK_MAX_KEEPALIVE)
        stock = httpx2.Limits(
            max_connections=limits.max_connections,
            max_keepalive_connections=kept,
            keepalive_expiry=limits.keepalive_expiry,
        )
        return httpx2.AsyncClient(timeout=timeout, limits=stock)
    transport = ReusingTransport(ssl_context=httpx2.create_ssl_context(), limits=limits)
    return httpx2.AsyncClient(timeout=timeout, transport=transport)
