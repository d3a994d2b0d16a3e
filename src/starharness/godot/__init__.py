"""The Godot editor bridge: a loopback TCP server for the agent_rpc addon and 27 godot_* tools."""

from .bridge import (
    BridgeEvent,
    BridgeSettings,
    BridgeStatus,
    EndpointFile,
    EventSink,
    GodotBridge,
    PlayErrorRecord,
    default_home,
    endpoint_path,
)
from .errors import GodotError, GodotErrorCode, HandshakeFailure
from .plugin import (
    ALL_TOOLS,
    BRIDGE_EVENT,
    GODOT_BRIDGE,
    GodotBridgeConfig,
    GodotBridgePlugin,
)
from .protocol.methods import (
    ALLOWED_METHODS,
    METHOD_TOOL,
    MUTATING_TOOLS,
    TOOL_METHOD,
    TOOL_NAMES,
)
from .protocol.reply import RpcReply
from .runtime_tools import GODOT_TAG, bridge_tool
from .tools import (
    GODOT_TOOLS,
    GodotOutcome,
    GodotToolSpec,
    enabled_specs,
    tool_spec,
)

__all__ = [
    "ALLOWED_METHODS",
    "ALL_TOOLS",
    "BRIDGE_EVENT",
    "GODOT_BRIDGE",
    "GODOT_TAG",
    "GODOT_TOOLS",
    "METHOD_TOOL",
    "MUTATING_TOOLS",
    "TOOL_METHOD",
    "TOOL_NAMES",
    "BridgeEvent",
    "BridgeSettings",
    "BridgeStatus",
    "EndpointFile",
    "EventSink",
    "GodotBridge",
    "GodotBridgeConfig",
    "GodotBridgePlugin",
    "GodotError",
    "GodotErrorCode",
    "GodotOutcome",
    "GodotToolSpec",
    "HandshakeFailure",
    "PlayErrorRecord",
    "RpcReply",
    "bridge_tool",
    "default_home",
    "enabled_specs",
    "endpoint_path",
    "tool_spec",
]
