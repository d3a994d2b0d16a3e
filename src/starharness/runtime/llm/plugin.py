"""The LLM plugin: builds a provider from its config row and registers it with `ctx.get(LLM)`."""

from __future__ import annotations

import dataclasses
import re
from typing import ClassVar

import httpx2
from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt, field_validator

from ..credentials import aget_secret
from ..kernel import Context, Plugin
from .admission import DEFAULT_CONCURRENCY, MAX_CONCURRENCY
from .errors import MissingCredentialError, ProviderConfigError
from .keys import LLM
from .profiles import PROFILES, get_profile
from .provider import OpenAICompatibleProvider, Timeouts
from .retry import RetryPolicy
from .service import LlmService

_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class TimeoutsConfig(BaseModel):
    """Seconds per phase of a request; null means no limit."""

    model_config = ConfigDict(extra="forbid")

    connect_s: PositiveFloat | None = 10.0
    first_byte_s: PositiveFloat | None = 30.0
    """Well inside an NPC turn's 120 s, so a stalled request is retried within the turn."""
    idle_s: PositiveFloat | None = 30.0
    write_s: PositiveFloat | None = 60.0

    def build(self) -> Timeouts:
        return Timeouts(self.connect_s, self.first_byte_s, self.idle_s, self.write_s)


class RetryConfig(BaseModel):
    """Retries of failed requests: exponential backoff with jitter, honouring Retry-After."""

    model_config = ConfigDict(extra="forbid")

    max_attempts: PositiveInt = 4
    base_delay_s: float = Field(default=0.5, ge=0)
    multiplier: float = Field(default=2.0, ge=1)
    max_delay_s: float = Field(default=20.0, ge=0)
    jitter: float = Field(default=0.25, ge=0, le=1)
    max_retry_after_s: float = Field(default=120.0, ge=0)
    retry_after_output: bool = True

    def build(self) -> RetryPolicy:
        return RetryPolicy(
            max_attempts=self.max_attempts,
            base_delay_s=self.base_delay_s,
            multiplier=self.multiplier,
            max_delay_s=self.max_delay_s,
            jitter=self.jitter,
            max_retry_after_s=self.max_retry_after_s,
            retry_after_output=self.retry_after_output,
        )


class LlmConfig(BaseModel):
    """One provider. Only the NAME of the key's variable is ever configured, never a key."""

    # A key pasted into a field must not come back in a validation message.
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    provider: str = "deepseek"
    """Profile: deepseek, openai, openai-compatible or llama-cpp."""
    name: str | None = None
    """Registration name (default: the provider's); lets one profile serve two endpoints."""
    model: str | None = None
    base_url: str | None = None
    """Overrides the profile's base-URL variable and default (e.g. `http://127.0.0.1:8000/v1`)."""
    api_key_env: str | None = None
    """Variable holding the key, when not the profile's (e.g. `MY_DEEPSEEK_KEY`)."""
    default: bool = False
    """Make this the default provider even if another was registered first."""
    timeouts: TimeoutsConfig = Field(default_factory=TimeoutsConfig)
    retry: RetryConfig = Field(default_factory=RetryConfig)
    max_tokens: PositiveInt | None = None
    max_concurrent_requests: int = Field(default=DEFAULT_CONCURRENCY, ge=1, le=MAX_CONCURRENCY)
    """Model requests in flight at once in this process; the rest wait in one FIFO queue."""
    context_window: int | None = Field(default=None, ge=256)
    """Tokens the server's model reads at most (prompt plus output), when not the profile's:
    e.g. a llama.cpp server started with another `--n-ctx`. Compaction keeps requests under it."""
    continues_calls: bool | None = None
    """Whether the server continues a forced call the request began, when not the profile's:
    `false` for a llama-cpp-python server other than `models serve-local`, which would read
    the begun call as a finished one (see `ProviderProfile.continues_calls`)."""

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value: str) -> str:
        if value not in PROFILES:
            raise ValueError(f"unknown provider; choose one of: {', '.join(PROFILES)}")
        return value

    @field_validator("api_key_env")
    @classmethod
    def _variable_name(cls, value: str | None) -> str | None:
        if value is not None and not _VARIABLE.fullmatch(value):
            raise ValueError(
                "must be the name of an environment variable (like DEEPSEEK_API_KEY), not a key"
            )
        return value


def _missing_key_message(variable: str, provider: str) -> str:
    return (
        f"{variable} is not set: the {provider} provider needs it "
        "(set it in the environment, ./.env or $STAR_HARNESS_HOME/credentials.env)"
    )


async def build_provider(
    config: LlmConfig, *, http: httpx2.AsyncClient | None = None
) -> OpenAICompatibleProvider:
    """The provider `config` describes, with its key and base URL looked up by variable name.

    Raises MissingCredentialError naming the variable when a required key is not set, and
    ProviderConfigError when no model or base URL can be found.
    """
    profile = get_profile(config.provider)
    key_variable = config.api_key_env or profile.api_key_env
    secret = await aget_secret(key_variable) if key_variable else None
    if secret is None and profile.key_required:
        raise MissingCredentialError(_missing_key_message(key_variable or "a key", profile.name))
    base_url = config.base_url
    if not base_url and profile.base_url_env:
        from_env = await aget_secret(profile.base_url_env)
        base_url = from_env.reveal().strip() if from_env is not None else None
    base_url = base_url or profile.default_base_url
    if not base_url:
        raise ProviderConfigError(
            f"the {profile.name} provider needs a base URL: set base_url (or --base-url)"
            + (f" or {profile.base_url_env}" if profile.base_url_env else "")
        )
    model = config.model or profile.default_model
    if not model:
        raise ProviderConfigError(
            f"the {profile.name} provider has no default model: set model (or --model)"
        )
    if config.context_window is not None:
        profile = dataclasses.replace(profile, context_window=config.context_window)
    if config.continues_calls is not None:
        profile = dataclasses.replace(profile, continues_calls=config.continues_calls)
    return OpenAICompatibleProvider(
        profile,
        base_url=base_url,
        api_key=secret,
        model=model,
        http=http,
        timeouts=config.timeouts.build(),
        name=config.name,
    )


class LlmPlugin(Plugin[LlmConfig]):
    """Provides `ctx.get(LLM)` (or joins the one already there) with the configured provider."""

    Config: ClassVar[type[BaseModel]] = LlmConfig
    provides = (LLM,)

    async def setup(self, ctx: Context, config: LlmConfig) -> None:
        provider = await build_provider(config)
        ctx.scope.add(provider.aclose)
        service = ctx.maybe(LLM)
        if service is None:
            service = LlmService()
            ctx.provide(LLM, service)
        if config.max_concurrent_requests != service.admission.concurrency:
            service.admission.resize(config.max_concurrent_requests)
        ctx.scope.add(
            service.register(
                provider,
                default=config.default,
                retry=config.retry.build(),
                max_tokens=config.max_tokens or provider.profile.default_max_tokens,
            )
        )
