"""The provider chain: the first provider that works confines; none working refuses the command."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from .errors import SandboxUnavailableError
from .policy import SandboxPolicy
from .provider import SandboxProvider


@dataclass(frozen=True, slots=True)
class Confined:
    """A wrapped command ready to spawn, and the provider that wrapped it."""

    argv: list[str]
    provider: str
    summary: str


class SandboxChain:
    """Tries providers in order. Each is probed once (in a thread); the answer is kept."""

    def __init__(self, providers: Sequence[SandboxProvider]) -> None:
        self.providers = tuple(providers)
        self._chosen: SandboxProvider | None = None
        self._reasons: dict[str, str] | None = None
        self._lock = asyncio.Lock()

    async def provider(self) -> SandboxProvider:
        """The provider in use; raises SandboxUnavailableError naming why each one failed."""
        async with self._lock:
            if self._chosen is None and self._reasons is None:
                self._chosen, self._reasons = await asyncio.to_thread(self._probe)
        if self._chosen is None:
            raise SandboxUnavailableError(self._reasons or {})
        return self._chosen

    def _probe(self) -> tuple[SandboxProvider | None, dict[str, str]]:
        reasons: dict[str, str] = {}
        for provider in self.providers:
            try:
                why = provider.probe()
            except Exception as error:
                why = f"probing failed: {error}"
            if why is None:
                return provider, reasons
            reasons[provider.name] = why
        return None, reasons

    @property
    def reasons(self) -> dict[str, str]:
        """Why the providers before the chosen one (or all of them) did not work."""
        return dict(self._reasons or {})

    async def confine(self, argv: Sequence[str], policy: SandboxPolicy) -> Confined:
        provider = await self.provider()
        wrapped = await asyncio.to_thread(provider.confine, argv, policy)
        return Confined(wrapped, provider.name, provider.describe(policy))
