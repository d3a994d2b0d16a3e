"""Starting without a usable model: a placeholder for an llm row whose provider cannot be built.

An editor that launches `star-harness acp`, or a client of `rpc`, must be able to connect and
learn that a model needs configuring (ACP's `authMethods`, rpc's `initialize.model`) rather
than see a crashed process. The placeholder provides the LLM service the agent rows need; every
request to it fails with the same `MissingCredentialError`, carrying the problem the composer
found (which variable or flag to set: the runtime does not know the command line).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from ..kernel import Context, Plugin
from .errors import MissingCredentialError
from .keys import LLM
from .service import LlmService
from .types import LlmRequest, StreamChunk

UNCONFIGURED_PLUGIN = "starharness.runtime.llm.unconfigured:UnconfiguredLlmPlugin"


class UnconfiguredLlmConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    problem: str
    """What keeps the configured model from being used, and how to fix it."""
    name: str = "unconfigured"
    variable: str | None = None
    """The environment variable that would hold the missing key, when a key is what is missing."""


class UnconfiguredProvider:
    """Stands in for a provider that could not be built; every request fails with `problem`."""

    def __init__(self, name: str, problem: str, variable: str | None = None) -> None:
        self._name = name
        self.problem = problem
        self.variable = variable

    @property
    def name(self) -> str:
        return self._name

    @property
    def default_model(self) -> str:
        return "none"

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamChunk]:
        # An async generator (callers iterate it), which fails on its first step; through a
        # helper, since a `yield` after a bare `raise` is unreachable code to vulture.
        for chunk in self._refuse():
            yield chunk

    def _refuse(self) -> tuple[StreamChunk, ...]:
        raise MissingCredentialError(self.problem)

    async def aclose(self) -> None:
        return None


class UnconfiguredLlmPlugin(Plugin[UnconfiguredLlmConfig]):
    """Provides `ctx.get(LLM)` holding only an UnconfiguredProvider."""

    Config: ClassVar[type[BaseModel]] = UnconfiguredLlmConfig
    provides = (LLM,)

    async def setup(self, ctx: Context, config: UnconfiguredLlmConfig) -> None:
        service = ctx.maybe(LLM)
        if service is None:
            service = LlmService()
            ctx.provide(LLM, service)
        provider = UnconfiguredProvider(config.name, config.problem, config.variable)
        ctx.scope.add(service.register(provider))


def unconfigured(service: LlmService | None) -> UnconfiguredProvider | None:
    """The default provider when it is a placeholder; None when it is usable (or there is no
    model at all)."""
    if service is None or service.default_name is None:
        return None
    provider = service.get()
    return provider if isinstance(provider, UnconfiguredProvider) else None
