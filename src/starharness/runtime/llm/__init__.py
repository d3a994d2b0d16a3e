"""LLM providers behind one streaming interface: profiles, the chat-completions client, retry.

The wire encoding (`.wire`), request quirks (`.quirks`) and retry loop (`.retry`) are internals;
tests and tools that need them import those modules.
"""

from .admission import AdmissionQueue
from .errors import (
    AuthError,
    ContextOverflowError,
    InvalidRequestError,
    LlmConnectionError,
    LlmError,
    LlmTimeoutError,
    MissingCredentialError,
    ProtocolError,
    ProviderConfigError,
    QuotaExceededError,
    RateLimitedError,
    ServerError,
)
from .keys import LLM
from .plugin import LlmConfig, LlmPlugin, RetryConfig, TimeoutsConfig, build_provider
from .profiles import (
    DEEPSEEK,
    LLAMA_CPP,
    OPENAI,
    OPENAI_COMPATIBLE,
    PROFILES,
    ArgumentConstraint,
    ProviderProfile,
    UnknownProviderError,
    get_profile,
)
from .provider import LlmProvider, OpenAICompatibleProvider, Timeouts
from .request import SESSION_HEADER
from .retry import OnRetry, RetryInfo, RetryPolicy
from .service import LlmService, ProviderSettings
from .types import (
    AssistantMessage,
    Finish,
    FinishReason,
    LlmRequest,
    Message,
    NamedToolChoice,
    ReasoningDelta,
    StreamChunk,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolChoice,
    ToolMessage,
    ToolSchema,
    Usage,
    UserMessage,
)
from .unconfigured import (
    UNCONFIGURED_PLUGIN,
    UnconfiguredLlmConfig,
    UnconfiguredLlmPlugin,
    UnconfiguredProvider,
    unconfigured,
)

__all__ = [
    "DEEPSEEK",
    "LLAMA_CPP",
    "LLM",
    "OPENAI",
    "OPENAI_COMPATIBLE",
    "PROFILES",
    "SESSION_HEADER",
    "UNCONFIGURED_PLUGIN",
    "AdmissionQueue",
    "ArgumentConstraint",
    "AssistantMessage",
    "AuthError",
    "ContextOverflowError",
    "Finish",
    "FinishReason",
    "InvalidRequestError",
    "LlmConfig",
    "LlmConnectionError",
    "LlmError",
    "LlmPlugin",
    "LlmProvider",
    "LlmRequest",
    "LlmService",
    "LlmTimeoutError",
    "Message",
    "MissingCredentialError",
    "NamedToolChoice",
    "OnRetry",
    "OpenAICompatibleProvider",
    "ProtocolError",
    "ProviderConfigError",
    "ProviderProfile",
    "ProviderSettings",
    "QuotaExceededError",
    "RateLimitedError",
    "ReasoningDelta",
    "RetryConfig",
    "RetryInfo",
    "RetryPolicy",
    "ServerError",
    "StreamChunk",
    "TextDelta",
    "Timeouts",
    "TimeoutsConfig",
    "ToolCall",
    "ToolCallDelta",
    "ToolChoice",
    "ToolMessage",
    "ToolSchema",
    "UnconfiguredLlmConfig",
    "UnconfiguredLlmPlugin",
    "UnconfiguredProvider",
    "UnknownProviderError",
    "Usage",
    "UserMessage",
    "build_provider",
    "get_profile",
    "unconfigured",
]
