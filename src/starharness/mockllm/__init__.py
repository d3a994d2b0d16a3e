"""An OpenAI-compatible mock LLM server, scripted per conversation, for keyless play and tests.

It depends on nothing else of star-harness: games import its request and step types to build
offline brains (responders).
"""

from .capabilities import CAPABILITY_PROFILES, MockCapabilities
from .conversations import (
    SERVING_KEEP_CONVERSATIONS,
)
from .fragments import split_at, split_every
from .requests import (
    ChatMessage,
    ChatRequest,
    FunctionCall,
    FunctionDefinition,
    MessageToolCall,
    OfferedTool,
    RecordedRequest,
)
from .responder import Responder, ResponderError, load_responder
from .scripts import ScriptFile, ScriptFileError, load_script_file, parse_script
from .server import SESSION_HEADER, MockLlmServer, StepLike
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
    "CAPABILITY_PROFILES",
    "SERVING_KEEP_CONVERSATIONS",
    "SESSION_HEADER",
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
    "MockCapabilities",
    "MockLlmServer",
    "OfferedTool",
    "QuotaExceeded",
    "RateLimit",
    "ReasoningSuccess",
    "RecordedRequest",
    "Responder",
    "ResponderError",
    "ScriptFile",
    "ScriptFileError",
    "ScriptedCall",
    "ServerFault",
    "ServiceUnavailable",
    "SlowSuccess",
    "Stall",
    "Step",
    "StepLike",
    "StreamDisconnect",
    "StreamShape",
    "Success",
    "ToolCalls",
    "WrongContentType",
    "load_responder",
    "load_script_file",
    "parse_behaviour_list",
    "parse_script",
    "parse_step",
    "parse_steps",
    "split_at",
    "split_every",
]
