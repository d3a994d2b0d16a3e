"""The web UI without a usable model: it starts anyway and says how to configure one.

NPC transcripts and the Godot panel need no model, so a missing key must not keep the page
from opening. An `llm` row whose provider cannot be built (no key, no base URL, no model) is
swapped for a placeholder that provides the LLM service the agent rows need and answers every
request with the same clear error; the page reads that error from `/api/status`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from ..runtime.config import ResolvedProfile
from ..runtime.config.profile import ResolvedRow
from ..runtime.kernel import Context, Plugin
from ..runtime.llm import (
    LLM,
    LlmConfig,
    LlmPlugin,
    LlmRequest,
    LlmService,
    MissingCredentialError,
    ProviderConfigError,
    StreamChunk,
    build_provider,
)

PLACEHOLDER_PLUGIN = "starharness.webui.no_model:NoModelPlugin"
_HOW_TO = (
    "set it and restart `star-harness web`, or choose another model with --provider, --model "
    "and --base-url (a local OpenAI-compatible server: --provider openai-compatible "
    "--base-url http://127.0.0.1:8080/v1 --model NAME)"
)


class NoModelConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    problem: str
    """What keeps the configured model from being used, and how to fix it."""
    name: str = "unconfigured"


class UnconfiguredProvider:
    """Stands in for a provider that could not be built; every request fails with `problem`."""

    def __init__(self, name: str, problem: str) -> None:
        self._name = name
        self.problem = problem

    @property
    def name(self) -> str:
        return self._name

    @property
    def default_model(self) -> str:
        return "none"

    async def stream(self, request: LlmRequest) -> AsyncIterator[StreamChunk]:
        raise MissingCredentialError(self.problem)
        yield  # pragma: no cover - makes this an async generator, as the protocol's callers expect

    async def aclose(self) -> None:
        return None


class NoModelPlugin(Plugin[NoModelConfig]):
    """Provides `ctx.get(LLM)` holding only an UnconfiguredProvider."""

    Config: ClassVar[type[BaseModel]] = NoModelConfig
    provides = (LLM,)

    async def setup(self, ctx: Context, config: NoModelConfig) -> None:
        service = ctx.maybe(LLM)
        if service is None:
            service = LlmService()
            ctx.provide(LLM, service)
        ctx.scope.add(service.register(UnconfiguredProvider(config.name, config.problem)))


async def model_problem(config: LlmConfig) -> str | None:
    """Why the provider `config` describes cannot be built, with the fix; None if it can."""
    try:
        provider = await build_provider(config)
    except (MissingCredentialError, ProviderConfigError) as exc:
        return f"No model is configured: {exc}; {_HOW_TO}."
    await provider.aclose()
    return None


async def without_unusable_models(profile: ResolvedProfile) -> ResolvedProfile:
    """`profile` with each LLM row that cannot build its provider replaced by a placeholder."""
    rows: list[ResolvedRow] = []
    for row in profile.rows:
        if issubclass(row.plugin_class, LlmPlugin) and isinstance(row.config, LlmConfig):
            problem = await model_problem(row.config)
            if problem is not None:
                name = row.config.name or row.config.provider
                row = dataclasses.replace(
                    row,
                    plugin=PLACEHOLDER_PLUGIN,
                    plugin_class=NoModelPlugin,
                    config=NoModelConfig(problem=problem, name=name),
                )
        rows.append(row)
    return dataclasses.replace(profile, rows=tuple(rows))


class ModelStatus(BaseModel):
    """What the page shows about the model: ready, or the problem and how to fix it."""

    ready: bool
    problem: str | None = None
    provider: str | None = None
    model: str | None = None


def model_status(ctx: Context) -> ModelStatus:
    service = ctx.maybe(LLM)
    if service is None or service.default_name is None:
        return ModelStatus(ready=False, problem="This profile has no model (no llm row).")
    provider = service.get()
    if isinstance(provider, UnconfiguredProvider):
        return ModelStatus(ready=False, problem=provider.problem)
    return ModelStatus(ready=True, provider=provider.name, model=provider.default_model)
