"""The Godot editor bridge: a loopback TCP server for the agent_rpc addon and 27 godot_* tools."""

from .bridge import (
    BridgeEvent,
    BridgeSettings,
    BridgeStatus,
    GodotBridge,
    endpoint_path,
)
from .errors import GodotError, GodotErrorCode, HandshakeFailure
from .plugin import (
    BRIDGE_EVENT,
    GODOT_BRIDGE,
    GodotBridgeConfig,
    GodotBridgePlugin,
)
from .protocol.methods import (
    ALLOWED_METHODS,
    METHOD_TOOL,
    MUTATING_TOOLS,
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
    "BRIDGE_EVENT",
    "GODOT_BRIDGE",
    "GODOT_TAG",
    "GODOT_TOOLS",
    "METHOD_TOOL",
    "MUTATING_TOOLS",
    "TOOL_NAMES",
    "BridgeEvent",
    "BridgeSettings",
    "BridgeStatus",
    "GodotBridge",
    "GodotBridgeConfig",
    "GodotBridgePlugin",
    "GodotError",
    "GodotErrorCode",
    "GodotOutcome",
    "GodotToolSpec",
    "HandshakeFailure",
    "RpcReply",
    "bridge_tool",
    "enabled_specs",
    "endpoint_path",
    "tool_spec",
]
