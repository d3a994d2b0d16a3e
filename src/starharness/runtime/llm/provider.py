"""The provider contract and the chat-completions client every built-in profile uses."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import AsyncIterator, Callable, Generator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import httpx2

from ..credentials import Secret
from .admission import MAX_CONCURRENCY
from .decode import ChunkDecoder
from .errors import (
    InvalidRequestError,
    LlmError,
    LlmTimeoutError,
    ProtocolError,
)
from .event_stream import read_event_stream
from .http_errors import error_from_response, error_from_transport
from .profiles import ProviderProfile
from .quirks import RequestPlan, plan_request
from .request import RequestBuilder
from .stall import StallGuard
from .transport import llm_http_client
from .types import LlmRequest, StreamChunk
from .wire import WireEncoder, encoder_for

_LIMITS = httpx2.Limits(max_connections=MAX_CONCURRENCY, max_keepalive_connections=MAX_CONCURRENCY)
"""As many connections, busy or idle, as the admission queue ever lets requests in at once.
The queue in front bounds the requests in flight to its concurrency, and the pool opens a
connection only when no idle one is left, so the pool follows the concurrency by itself: after
a burst every admitted request finds an idle connection (bench/storm.py counts the new ones),
and idle ones unused for `keepalive_expiry` (5 s) are closed. (httpx 0.28's pool, with a
smaller keep-alive limit, closed nearly every connection a request released, so each request
opened a new TCP connection. httpx2's own transport, when it is used, keeps fewer idle: see
`transport.STOCK_MAX_KEEPALIVE`.)"""
_ERROR_BODY_LIMIT = 64 * 1024
_ANSWER_BODY_LIMIT = 16 * 1024 * 1024


@runtime_checkable
class LlmProvider(Protocol):
    """A model endpoint: streams normalised chunks for a request."""

    @property
    def name(self) -> str: ...

    @property
    def default_model(self) -> str: ...

    def stream(self, request: LlmRequest) -> AsyncIterator[StreamChunk]:
        """Chunks of the answer; raises LlmError subclasses. Closing it closes the response."""
        ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Seconds allowed for each phase of a request (None: no limit)."""

    connect: float | None = 10.0
    first_byte: float | None = 30.0
    """From sending the request to the first bytes of the body (keep-alive comments count);
    well inside a turn's timeout, so a stalled request is retried within the turn."""
    idle: float | None = 30.0
    """Longest gap between two reads of the body."""
    write: float | None = 60.0


def _display_url(url: str) -> str:
    """`url` without user info, which may hold credentials."""
    try:
        parsed = httpx2.URL(url)
    except httpx2.InvalidURL:
        return "<invalid URL>"
    if parsed.userinfo:
        return str(parsed.copy_with(username=None, password=None))
    return url


def _header_safe(value: str) -> bool:
    return value.isascii() and value.isprintable() and bool(value)


class OpenAICompatibleProvider:
    """Streams chat completions from any server speaking the OpenAI wire format.

    Every request carries `X-Star-Harness-Session: <session id>` and, where the profile names
    a cache-key field, a prompt cache key that is the same for every request of a session.
    """

    __slots__ = (
        "_cache_keys",
        "_encoder",
        "_headers",
        "_http",
        "_httpx_timeout",
        "_json_headers",
        "_model",
        "_name",
        "_owns_http",
        "_profile",
        "_requests",
        "_secret",
        "_timeouts",
        "_url",
        "_url_shown",
    )

    def __init__(
        self,
        profile: ProviderProfile,
        *,
        base_url: str,
        api_key: str | Secret | None = None,
        model: str | None = None,
        http: httpx2.AsyncClient | None = None,
        timeouts: Timeouts | None = None,
        name: str | None = None,
    ) -> None:
        chosen = model or profile.default_model
        if not chosen:
            raise ValueError(f"provider {profile.name!r} has no default model: name one")
        self._profile = profile
        self._name = name or profile.name
        self._model = chosen
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._url_shown = _display_url(self._url)
        if isinstance(api_key, str):
            api_key = Secret(profile.api_key_env or "API_KEY", api_key) if api_key else None
        self._secret = api_key
        self._http = http
        self._owns_http = http is None
        self._timeouts = timeouts or Timeouts()
        t = self._timeouts
        limits = [x for x in (t.first_byte, t.idle) if x is not None]
        # The stall guard enforces first-byte and idle precisely; httpx2's read limit is a backstop.
        self._httpx_timeout = httpx2.Timeout(
            connect=t.connect,
            read=max(limits) + 1.0 if len(limits) == 2 else None,
            write=t.write,
            pool=t.connect,
        )
        self._requests = RequestBuilder(self._url, self._httpx_timeout)
        self._encoder: WireEncoder = encoder_for(profile)
        self._headers = {"accept": "text/event-stream", "content-type": "application/json"}
        if self._secret is not None:
            self._headers["authorization"] = "Bearer " + self._secret.reveal()
        self._json_headers = {**self._headers, "accept": "application/json"}
        """For the unstreamed request."""
        self._cache_keys: dict[str, str] = {}

    # -- identity ------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def default_model(self) -> str:
        return self._model

    @property
    def profile(self) -> ProviderProfile:
        return self._profile

    @property
    def url(self) -> str:
        """The chat-completions endpoint (user info removed)."""
        return self._url_shown

    @property
    def timeouts(self) -> Timeouts:
        return self._timeouts

    def __repr__(self) -> str:
        key = "set" if self._secret is not None else "none"
        return (
            f"OpenAICompatibleProvider(name={self._name!r}, url={self._url_shown!r}, "
            f"model={self._model!r}, key={key})"
        )

    # -- lifecycle -----------------------------------------------------------------------------

    async def _client(self) -> httpx2.AsyncClient:
        client = self._http
        if client is None:
            # Building a client loads the CA bundle from disk, so keep it off the event loop.
            made = await asyncio.to_thread(
                llm_http_client, timeout=self._httpx_timeout, limits=_LIMITS
            )
            if self._http is None:
                self._http = made
            else:
                await made.aclose()
            client = self._http
        return client

    async def aclose(self) -> None:
        client, self._http = self._http, None
        if client is not None and self._owns_http:
            await client.aclose()

    # -- requests ------------------------------------------------------------------------------

    def cache_key(self, session_id: str) -> str | None:
        """The prompt cache key sent for `session_id` (None if the profile takes none)."""
        if self._profile.cache_key_field is None:
            return None
        key = self._cache_keys.get(session_id)
        if key is None:
            # A digest, not the id itself: stable across restarts, fixed length, reveals nothing.
            key = "sh-" + hashlib.blake2b(session_id.encode(), digest_size=16).hexdigest()
            if len(self._cache_keys) > 4096:
                self._cache_keys.clear()
            self._cache_keys[session_id] = key
        return key

    def plan(self, request: LlmRequest) -> RequestPlan:
        """How `request` is sent to this server: as asked, with a forced tool, or unstreamed."""
        return plan_request(self._profile, request)

    def encode(self, request: LlmRequest) -> bytes:
        """The exact body `stream` sends for `request` (an empty model means the default)."""
        return self._body(self.plan(request))

    def _body(self, plan: RequestPlan) -> bytes:
        request = plan.request
        return self._encoder.body(
            request,
            model=self._model,
            cache_key=self.cache_key(request.session_id),
            stream=plan.stream,
        )

    def stream(self, request: LlmRequest) -> AsyncIterator[StreamChunk]:
        if not _header_safe(request.session_id):
            raise InvalidRequestError(
                f"session id {request.session_id!r} cannot be sent as an HTTP header "
                "(printable ASCII only)"
            )
        plan = self.plan(request)
        if not plan.stream:
            return self._complete(plan)
        return self._stream(plan)

    async def _complete(self, plan: RequestPlan) -> AsyncIterator[StreamChunk]:
        """An unstreamed request, its answer yielded as the chunks a stream would have carried."""
        body = self._body(plan)
        client = self._http or await self._client()
        guard = StallGuard()
        response: httpx2.Response | None = None
        phase = "first"
        try:
            with self._mapped_errors(guard, lambda: phase):
                # The whole answer is generated before its first byte: first_byte bounds it all.
                guard.begin(self._timeouts.first_byte)
                http_request = self._http_request(
                    client, body, self._json_headers, plan.request.session_id
                )
                response = await client.send(http_request, stream=True)
                phase = "idle"
                data = await self._read_limited(response, guard, limit=_ANSWER_BODY_LIMIT)
                guard.end()
                status = response.status_code
                if not 200 <= status < 300:
                    key_env = self._secret.name if self._secret else self._profile.api_key_env
                    raise error_from_response(status, response.headers, data, key_env=key_env)
                chunks = ChunkDecoder(self._profile).decode_completion(data)
        finally:
            guard.close()
            if response is not None:
                await response.aclose()
        for chunk in chunks:
            yield chunk

    async def _stream(self, plan: RequestPlan) -> AsyncIterator[StreamChunk]:
        body = self._body(plan)
        client = self._http or await self._client()
        guard = StallGuard()
        response: httpx2.Response | None = None
        try:
            with self._mapped_errors(guard):
                guard.begin(self._timeouts.first_byte)
                http_request = self._http_request(
                    client, body, self._headers, plan.request.session_id
                )
                response = await client.send(http_request, stream=True)
                await self._check_response(response, guard)
                chunks = read_event_stream(
                    response,
                    ChunkDecoder(self._profile),
                    guard,
                    idle_s=self._timeouts.idle,
                    url_shown=self._url_shown,
                    timeout_error=self._timeout_error,
                )
                async with contextlib.aclosing(chunks):
                    async for chunk in chunks:
                        yield chunk
        finally:
            guard.close()
            if response is not None:
                await response.aclose()

    @contextlib.contextmanager
    def _mapped_errors(
        self, guard: StallGuard, phase: Callable[[], str] = lambda: "first"
    ) -> Generator[None]:
        """Our timeouts, transport failures and server errors as LlmErrors with no secret in them.

        `phase` says what a timeout was waiting for: the answer to begin, or its next bytes.
        """
        try:
            yield
        except asyncio.CancelledError:
            if guard.is_timeout():
                raise self._timeout_error(phase()) from None
            raise
        except httpx2.HTTPError as exc:
            raise self._redacted(error_from_transport(exc, url=self._url_shown)) from None
        except LlmError as exc:
            raise self._redacted(exc) from None

    # -- helpers -------------------------------------------------------------------------------

    def _http_request(
        self, client: httpx2.AsyncClient, body: bytes, static: dict[str, str], session_id: str
    ) -> httpx2.Request:
        """The POST carrying `body`, with the `static` headers and the session's."""
        own = client is self._http and self._owns_http
        return self._requests.build(client, body, static, session_id, own_client=own)

    async def _check_response(self, response: httpx2.Response, guard: StallGuard) -> None:
        status = response.status_code
        content_type = response.headers.get("content-type", "")
        if 200 <= status < 300 and content_type.lower().startswith("text/event-stream"):
            return
        body = await self._read_limited(response, guard)
        if not 200 <= status < 300:
            key_env = self._secret.name if self._secret else self._profile.api_key_env
            raise error_from_response(status, response.headers, body, key_env=key_env)
        snippet = body[:200].decode("utf-8", "replace")
        raise ProtocolError(
            f"expected an event stream from {self._url_shown} but got "
            f"{content_type or 'no content type'}: {snippet}"
        )

    async def _read_limited(
        self, response: httpx2.Response, guard: StallGuard, *, limit: int = _ERROR_BODY_LIMIT
    ) -> bytes:
        parts: list[bytes] = []
        size = 0
        idle = self._timeouts.idle
        async for raw in response.aiter_bytes():
            guard.begin(idle)
            parts.append(raw)
            size += len(raw)
            if size >= limit:
                break
        return b"".join(parts)[:limit]

    def _timeout_error(self, phase: str) -> LlmError:
        t = self._timeouts
        if phase == "first":
            text = f"no response from {self._url_shown} within {t.first_byte}s"
        else:
            text = f"the stream from {self._url_shown} stalled for more than {t.idle}s"
        return LlmTimeoutError(text)

    def _redacted(self, exc: LlmError) -> LlmError:
        secret = self._secret
        if secret is not None and exc.args and isinstance(exc.args[0], str):
            value = secret.reveal()
            if value in exc.args[0]:
                exc.args = (exc.args[0].replace(value, "***"), *exc.args[1:])
        return exc
