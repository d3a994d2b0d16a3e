"""An OpenAI-compatible mock LLM server, scripted per conversation, for keyless play and tests.

This module is the package's public face; its modules are insides that may move. Two APIs:

- **The responder API** (the testing API a game's offline brain is written against):
  `Responder`, the `ChatRequest` it is given (`ChatMessage`, `MessageToolCall`, `FunctionCall`,
  `OfferedTool`, `FunctionDefinition`) and the `Step` it returns (`Success`, `ToolCalls` with
  `ScriptedCall`, and the fault steps), re-exported from `starharness.responder`, where they
  live so the framework can type `Game.offline_responder` without importing this server. Games
  import these names from a face and nothing from the modules (an import contract in
  pyproject.toml); docs/mock-llm.md, "Responders".
- **The server** for tests and tools: `MockLlmServer`, scripts, capabilities, recording.

It depends on nothing else of star-harness but the responder API, so a game's brain costs no
framework import and the request it reads is exactly the OpenAI request the server parsed off
the wire.
"""

from ..responder import (
    BEHAVIOURS,
    BadApiKey,
    ChatMessage,
    ChatRequest,
    ConnectionReset,
    ContextOverflow,
    EmptyBody,
    FunctionCall,
    FunctionDefinition,
    InvalidRequest,
    MalformedEvent,
    MalformedJson,
    MaxTokens,
    MessageToolCall,
    OfferedTool,
    QuotaExceeded,
    RateLimit,
    ReasoningSuccess,
    Responder,
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
from .capabilities import CAPABILITY_PROFILES, MockCapabilities
from .conversations import (
    SERVING_KEEP_CONVERSATIONS,
)
from .fragments import split_at, split_every
from .requests import RecordedRequest
from .responder import ResponderError, load_responder
from .scripts import ScriptFile, ScriptFileError, load_script_file, parse_script
from .server import SESSION_HEADER, MockLlmServer, StepLike

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
