"""Provider profiles: every provider quirk is a field here, never a check on a model name."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from ..errors import StarHarnessError

ArgumentConstraint = Literal["none", "forced-grammar", "strict-schema"]
"""How a server keeps tool arguments to their JSON schema: not at all; by a grammar built from
the schema for a forced (named) call (llama-cpp-python); or, for function definitions marked
`strict: true`, by the schema itself (OpenAI's structured outputs)."""


@dataclass(frozen=True, slots=True)
class ProviderProfile:
    """How one kind of chat-completions server is reached and which dialect it speaks."""

    name: str
    default_model: str | None
    """None: the server has no sensible default, so the user must name a model."""
    default_base_url: str | None
    """Includes the version prefix (`.../v1`); `/chat/completions` is appended."""
    api_key_env: str | None
    """Name of the variable holding the key (only the name is ever configured)."""
    base_url_env: str | None
    key_required: bool = True
    reasoning_fields: tuple[str, ...] = ()
    """Delta fields that carry reasoning text, tried in order."""
    reasoning_send_field: str | None = None
    """Field to pass reasoning back in on assistant messages; None: never send it back."""
    cache_read_paths: tuple[tuple[str, ...], ...] = ()
    """Paths inside `usage` to the cached prompt tokens; the first one present wins."""
    cache_write_paths: tuple[tuple[str, ...], ...] = ()
    reasoning_tokens_paths: tuple[tuple[str, ...], ...] = (
        ("completion_tokens_details", "reasoning_tokens"),
    )
    cache_key_field: str | None = None
    """Body field for a stable per-session prompt cache key; None: the server takes none."""
    stream_usage: bool = True
    """Send `stream_options.include_usage` so the last chunk reports token usage."""
    max_tokens_field: str = "max_tokens"
    supports_tool_choice: bool = True
    supports_named_tool_choice: bool = True
    """False: a named tool choice is sent as "required" (the only tool the model may call)."""
    default_max_tokens: int | None = None
    """Output cap when neither the request nor the configuration sets one; None: the server's
    own. llama.cpp's server otherwise generates until its context is full, and a small model
    forced into a tool's grammar can fill a string for minutes."""
    null_content_with_tool_calls: bool = True
    """An assistant message with tool calls and no text sends `content: null` (OpenAI's schema);
    False: it sends "" (llama-cpp-python's server refuses null there)."""
    streams_open_tool_choice: bool = True
    """False: the server refuses a streamed request with tools whose tool choice is "auto" or
    "required". The provider then forces the request's `forcible_tool`, or, when the caller
    allows none, sends that request unstreamed (see `plan_request`)."""
    context_window: int | None = None
    """Tokens the model reads at most (prompt plus output); compaction keeps requests under a
    share of it. None: unknown (only a context-overflow error then triggers compaction)."""
    shows_tool_results: bool = True
    """False: the server's chat template drops tool messages, so the model never reads a tool
    result; whoever needs the model to read one must also say it in a user message."""
    argument_constraint: ArgumentConstraint = "none"
    """Whether and how the server constrains tool arguments to their schema (see the type)."""
    warm_prefixes: bool = False
    """True: the server keeps evaluated prompts (a local server's prompt cache) and computes
    every prompt token on this machine, so evaluating each agent's static prefix while nobody
    waits saves the first request its longest part."""
    continues_calls: bool = False
    """True: a request whose last message is an assistant message holding only a call of the
    tool its `tool_choice` forces, with arguments cut inside the first string, is answered with
    that call continued (its arguments begin with the text given, streamed before the prompt is
    evaluated), as `models serve-local` does. Another server would read it as a finished call."""


DEEPSEEK = ProviderProfile(
    name="deepseek",
    default_model="deepseek-v4-flash",
    default_base_url="https://api.deepseek.com",
    api_key_env="DEEPSEEK_API_KEY",
    base_url_env="DEEPSEEK_BASE_URL",
    reasoning_fields=("reasoning_content",),
    # Thinking mode refuses a follow-up whose tool-calling assistant turns lack their reasoning.
    reasoning_send_field="reasoning_content",
    cache_read_paths=(("prompt_cache_hit_tokens",),),
    context_window=1_000_000,
)

OPENAI = ProviderProfile(
    name="openai",
    default_model="gpt-5-mini",
    default_base_url="https://api.openai.com/v1",
    api_key_env="OPENAI_API_KEY",
    base_url_env="OPENAI_BASE_URL",
    cache_read_paths=(("prompt_tokens_details", "cached_tokens"),),
    cache_key_field="prompt_cache_key",
    # Reasoning models refuse `max_tokens`; every current model accepts this one.
    max_tokens_field="max_completion_tokens",
    context_window=400_000,
    argument_constraint="strict-schema",
)

OPENAI_COMPATIBLE = ProviderProfile(
    name="openai-compatible",
    default_model=None,
    default_base_url=None,
    api_key_env="OPENAI_COMPATIBLE_API_KEY",
    base_url_env="OPENAI_COMPATIBLE_BASE_URL",
    key_required=False,
    # vLLM, llama.cpp and LM Studio use the first name, Ollama and newer vLLM the second.
    reasoning_fields=("reasoning_content", "reasoning"),
    cache_read_paths=(("prompt_tokens_details", "cached_tokens"), ("prompt_cache_hit_tokens",)),
)

LLAMA_CPP = ProviderProfile(
    name="llama-cpp",
    # The server answers with whatever model it loaded, whatever the request names.
    default_model="local-gguf",
    # `python -m llama_cpp.server` listens here unless told otherwise.
    default_base_url="http://127.0.0.1:8000/v1",
    api_key_env="LLAMA_CPP_API_KEY",
    base_url_env="LLAMA_CPP_BASE_URL",
    key_required=False,
    reasoning_fields=("reasoning_content",),
    null_content_with_tool_calls=False,
    default_max_tokens=384,
    # Its chat handlers (chatml-function-calling and others) stream only a named tool choice:
    # "auto" and "required" fail inside the server when `stream` is true.
    streams_open_tool_choice=False,
    # `chatml-function-calling` renders system, user and assistant messages only.
    shows_tool_results=False,
    # A named tool choice is generated under a grammar made from that tool's JSON schema.
    argument_constraint="forced-grammar",
    # `models serve-local` loads the model with this window (`--n-ctx`); another server's: set
    # `context_window` in the llm row. Without it a long local encounter would overflow.
    context_window=8192,
    # `models serve-local` keeps evaluated prompts in RAM (`--cache`): a warmed NPC's greeting
    # evaluates its scene, not its 2,000-token system message and tools.
    warm_prefixes=True,
    # `models serve-local` continues a forced call begun in the last message: an NPC's line can
    # begin with the game's words for its offer while the model reads the result.
    continues_calls=True,
)

PROFILES: Mapping[str, ProviderProfile] = MappingProxyType(
    {p.name: p for p in (DEEPSEEK, OPENAI, OPENAI_COMPATIBLE, LLAMA_CPP)}
)
"""The built-in profiles by name."""


class UnknownProviderError(StarHarnessError, LookupError):
    """A provider name that no profile or registration knows."""


def get_profile(name: str) -> ProviderProfile:
    """The built-in profile called `name`; raises UnknownProviderError listing the known ones."""
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(PROFILES)
        raise UnknownProviderError(f"unknown LLM provider {name!r} (known: {known})") from None
