"""starharness.sdk: drive star-harness sessions from Python over the session protocol.

async with await Client.spawn(profile="task") as client:
    session = await client.create_session()
    turn = session.prompt("hello")
    async for update in turn:
        ...
    print(turn.result.text)
    await client.shutdown()
"""

from ..runtime.protocol import (
    ApprovalAsked,
    ApprovalDecided,
    HistoryItem,
    JobUpdated,
    PlanStep,
    PlanUpdated,
    PromptResult,
    ReasoningDelta,
    SessionSummary,
    SessionUpdate,
    TextDelta,
    ToolCalled,
    ToolResulted,
    TurnEnded,
    TurnStarted,
)
from .client import Client
from .errors import ConnectionLostError, RpcCallError, SdkError
from .session import ClientSession, PromptStream
from .transports import (
    ChildProcessTransport,
    LineTransport,
    StreamTransport,
    WebSocketTransport,
    rpc_command,
)

__all__ = [
    "ApprovalAsked",
    "ApprovalDecided",
    "ChildProcessTransport",
    "Client",
    "ClientSession",
    "ConnectionLostError",
    "HistoryItem",
    "JobUpdated",
    "LineTransport",
    "PlanStep",
    "PlanUpdated",
    "PromptResult",
    "PromptStream",
    "ReasoningDelta",
    "RpcCallError",
    "SdkError",
    "SessionSummary",
    "SessionUpdate",
    "StreamTransport",
    "TextDelta",
    "ToolCalled",
    "ToolResulted",
    "TurnEnded",
    "TurnStarted",
    "WebSocketTransport",
    "rpc_command",
]
