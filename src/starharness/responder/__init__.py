"""The responder API: what a game's offline brain is given and what it returns.

A responder is a function of one chat-completions request (`ChatRequest`, with its
`ChatMessage`s and `OfferedTool`s) to the step the mock LLM plays for it (`Step`: `Success`,
`ToolCalls` with `ScriptedCall`, or a fault). The mock LLM (`starharness.mockllm`, which
re-exports every name here) parses the request off the wire and calls the responder; a game
names its brain in `Game.offline_responder` (`starharness.npc`), typed by these names.

It depends on nothing else of star-harness (pydantic only), so both the framework and the mock
may import it without depending on each other.
"""

from .requests import (
    ChatMessage,
    ChatRequest,
    FunctionCall,
    FunctionDefinition,
    MessageToolCall,
    OfferedTool,
    Responder,
)
from .steps import (
    BEHAVIOURS,
    BadApiKey,
    ConnectionReset,
    ContextOverflow,
    EmptyBody,
    InvalidRequest,
    MalformedEvent,
    MalformedJson,
    MaxTokens,
    QuotaExceeded,
    RateLimit,
    ReasoningSuccess,
    ScriptedCall,
    ServerFault,
    ServiceUnavailable,
    SlowSuccess,
    Stall,
    Step,
    StreamDisconnect,
    StreamShape,
    Success,
    ToolCalls,
    WrongContentType,
    parse_behaviour_list,
    parse_step,
    parse_steps,
)

__all__ = [
    "BEHAVIOURS",
    "BadApiKey",
    "ChatMessage",
    "ChatRequest",
    "ConnectionReset",
    "ContextOverflow",
    "EmptyBody",
    "FunctionCall",
    "FunctionDefinition",
    "InvalidRequest",
    "MalformedEvent",
    "MalformedJson",
    "MaxTokens",
    "MessageToolCall",
    "OfferedTool",
    "QuotaExceeded",
    "RateLimit",
    "ReasoningSuccess",
    "Responder",
    "ScriptedCall",
    "ServerFault",
    "ServiceUnavailable",
    "SlowSuccess",
    "Stall",
    "Step",
    "StreamDisconnect",
    "StreamShape",
    "Success",
    "ToolCalls",
    "WrongContentType",
    "parse_behaviour_list",
    "parse_step",
    "parse_steps",
]
