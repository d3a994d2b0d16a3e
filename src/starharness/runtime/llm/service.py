"""The LLM service (`ctx.get(LLM)`): named providers, a default, and their request settings."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import cast

from ..kernel import Disposer, once
from .admission import AdmissionQueue
from .profiles import UnknownProviderError
from .provider import LlmProvider
from .quirks import PlansRequests, QuirkData
from .retry import OnRetry, RetryPolicy, stream_with_retry
from .types import LlmRequest, StreamChunk

_PLANNERS: dict[type, bool] = {}


def _plans_requests(provider: LlmProvider) -> bool:
    """Whether `provider` can plan requests, checked once per class: an isinstance check
    against a runtime protocol walks the protocol's members and costs more than the plan."""
    kind = type(provider)
    known = _PLANNERS.get(kind)
    if known is None:
        known = _PLANNERS[kind] = isinstance(provider, PlansRequests)
    return known


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """What a registration says about using its provider."""

    retry: RetryPolicy
    max_tokens: int | None = None


@dataclass(slots=True)
class _Entry:
    provider: LlmProvider
    settings: ProviderSettings


class LlmService:
    """Registry of providers by name; `get()` without a name is the default provider."""

    __slots__ = ("_default", "_entries", "admission")

    def __init__(self, admission: AdmissionQueue | None = None) -> None:
        self._entries: dict[str, _Entry] = {}
        self._default: str | None = None
        self.admission = admission or AdmissionQueue()
        """Every request of every provider waits its turn here (one queue per process)."""

    def register(
        self,
        provider: LlmProvider,
        *,
        default: bool = False,
        retry: RetryPolicy | None = None,
        max_tokens: int | None = None,
    ) -> Disposer:
        """Add `provider` under its name; the first one (or one with `default`) is the default."""
        name = provider.name
        if name in self._entries:
            raise ValueError(f"an LLM provider named {name!r} is already registered")
        entry = _Entry(provider, ProviderSettings(retry or RetryPolicy(), max_tokens))
        self._entries[name] = entry
        if default or self._default is None:
            self._default = name

        def unregister() -> None:
            if self._entries.get(name) is entry:
                del self._entries[name]
                if self._default == name:
                    self._default = next(iter(self._entries), None)

        return once(unregister)

    def _entry(self, name: str | None) -> _Entry:
        key = self._default if name is None else name
        entry = self._entries.get(key) if key is not None else None
        if entry is None:
            if not self._entries:
                raise UnknownProviderError("no LLM provider is registered")
            known = ", ".join(self._entries)
            raise UnknownProviderError(f"no LLM provider named {name!r} (registered: {known})")
        return entry

    def get(self, name: str | None = None) -> LlmProvider:
        """The provider called `name`, or the default one."""
        return self._entry(name).provider

    def settings(self, name: str | None = None) -> ProviderSettings:
        return self._entry(name).settings

    def names(self) -> tuple[str, ...]:
        return tuple(self._entries)

    @property
    def default_name(self) -> str | None:
        return self._default

    @property
    def default_model(self) -> str:
        """The default provider's model."""
        return self._entry(None).provider.default_model

    def quirk(self, request: LlmRequest, *, provider: str | None = None) -> QuirkData | None:
        """How the provider's declared quirks change `request`, as the session log records it.

        None when the request goes out as asked (or the provider cannot say).
        """
        chosen = self._entry(provider).provider
        if not _plans_requests(chosen):
            return None
        return cast(PlansRequests, chosen).plan(request).log_data()

    def stream(
        self, request: LlmRequest, *, provider: str | None = None, on_retry: OnRetry | None = None
    ) -> AsyncIterator[StreamChunk]:
        """Stream `request` from a provider, retried with that provider's policy.

        A request without `max_tokens` gets the registration's limit, if it has one.
        """
        entry = self._entry(provider)
        limit = entry.settings.max_tokens
        if request.max_tokens is None and limit is not None:
            request = replace(request, max_tokens=limit)
        return stream_with_retry(
            entry.provider, request, entry.settings.retry, on_retry, admission=self.admission
        )
