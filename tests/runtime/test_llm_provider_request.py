"""The provider's own request building makes exactly the request httpx2's `build_request` does."""

from __future__ import annotations

import httpx2
import pytest

from starharness.runtime.llm import OpenAICompatibleProvider
from starharness.runtime.llm.profiles import get_profile
from starharness.runtime.llm.request import SESSION_HEADER

_BODY = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": true}'


def _as_built(
    provider: OpenAICompatibleProvider,
    client: httpx2.AsyncClient,
    static: dict[str, str],
    session: str,
) -> httpx2.Request:
    return client.build_request(
        "POST",
        provider._requests._target,
        content=_BODY,
        headers={**static, SESSION_HEADER: session},
        timeout=provider._httpx_timeout,
    )


def _same(ours: httpx2.Request, theirs: httpx2.Request) -> None:
    assert ours.method == theirs.method
    assert ours.url == theirs.url
    assert ours.headers.raw == theirs.headers.raw
    assert ours.headers.encoding == theirs.headers.encoding
    assert ours.content == theirs.content
    assert isinstance(ours.stream, httpx2.ByteStream)
    assert b"".join(ours.stream) == b"".join(theirs.stream)  # type: ignore[arg-type]
    assert ours.extensions == theirs.extensions


@pytest.mark.parametrize("key", [None, "sk-test-0001"])
@pytest.mark.parametrize("url", ["http://127.0.0.1:9/v1", "https://api.example.org/v1/"])
async def test_every_request_is_the_one_build_request_makes(key: str | None, url: str) -> None:
    provider = OpenAICompatibleProvider(
        get_profile("openai-compatible"), base_url=url, api_key=key, model="m"
    )
    try:
        client = await provider._client()
        for static in (provider._headers, provider._json_headers):
            for session in ("session-1", "session-2", "session-1"):  # the shared part is kept
                ours = provider._http_request(client, _BODY, static, session)
                _same(ours, _as_built(provider, client, static, session))
                assert ours.headers[SESSION_HEADER] == session
        # Once the client holds a cookie, requests go through build_request, which sends it.
        client.cookies.set(
            "lb", "node-7", domain="127.0.0.1" if "127" in url else "api.example.org"
        )
        ours = provider._http_request(client, _BODY, provider._headers, "session-3")
        _same(ours, _as_built(provider, client, provider._headers, "session-3"))
        assert "cookie" in ours.headers
    finally:
        await provider.aclose()
