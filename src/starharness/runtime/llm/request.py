"""Building a model request's `httpx2.Request`: the headers all requests share merged once."""

from __future__ import annotations

import httpx2

SESSION_HEADER = "X-Star-Harness-Session"


def _parsed_url(url: str) -> httpx2.URL | str:
    """`url` parsed once (not for every request); left as text if httpx2 cannot parse it, so
    the request itself fails with the usual error."""
    try:
        return httpx2.URL(url)
    except httpx2.InvalidURL:
        return url


class RequestBuilder:
    """The POSTs of one provider to its endpoint, each the request `build_request` makes."""

    __slots__ = ("_shared", "_target", "_timeout", "_timeout_extension")

    def __init__(self, url: str, timeout: httpx2.Timeout) -> None:
        self._target = _parsed_url(url)
        self._timeout = timeout
        self._timeout_extension = timeout.as_dict()
        self._shared: tuple[httpx2.AsyncClient, dict[int, httpx2.Headers]] | None = None
        """The headers every request shares, per static header set (by id), for that client."""

    def build(
        self,
        client: httpx2.AsyncClient,
        body: bytes,
        static: dict[str, str],
        session_id: str,
        *,
        own_client: bool,
    ) -> httpx2.Request:
        """The POST carrying `body`, with the `static` headers and the session's.

        A client the provider made has no base URL, parameters or hooks, and its default
        headers never change, so while it holds no cookies its request is built directly: the
        headers every request shares (with `Host` first, where httpx2 puts it) are merged once,
        each request adds its session and `Content-Length` last (as httpx2 would), and the body
        goes in as the stream httpx2 would have made of it, so httpx2 does not normalise every
        header again for each request.
        """
        target = self._target
        if (
            own_client
            and not client.cookies
            and body
            and isinstance(target, httpx2.URL)
            and target.host
        ):
            headers = self._shared_headers(client, static, target).copy()
            headers[SESSION_HEADER] = session_id
            headers["Content-Length"] = str(len(body))
            request = httpx2.Request(
                "POST",
                target,
                headers=headers,
                stream=httpx2.ByteStream(body),
                extensions={"timeout": self._timeout_extension},
            )
            request.read()  # as httpx2 does for a body given whole: `request.content` is set
            return request
        return client.build_request(
            "POST",
            target,
            content=body,
            headers={**static, SESSION_HEADER: session_id},
            timeout=self._timeout,
        )

    def _shared_headers(
        self, client: httpx2.AsyncClient, static: dict[str, str], target: httpx2.URL
    ) -> httpx2.Headers:
        known = self._shared
        if known is None or known[0] is not client:
            known = self._shared = (client, {})
        shared = known[1].get(id(static))
        if shared is None:
            merged = httpx2.Headers(client.headers)
            merged.update(static)
            shared = httpx2.Headers([(b"Host", target.netloc), *merged.raw])
            known[1][id(static)] = shared
        return shared
