"""The loopback TCP bridge between the agent and Godot editors."""

from starharness.godot.bridge.endpoint import (
    ENDPOINT_VERSION,
    EndpointFile,
    default_home,
    endpoint_path,
    read_endpoint,
)
from starharness.godot.bridge.registry import BridgeEvent, EventSink
from starharness.godot.bridge.server import GodotBridge, checked_tool_names
from starharness.godot.bridge.settings import BridgeSettings
from starharness.godot.bridge.status import BridgeStatus, ClientStatus, ErrorRecord, PlayErrorRecord

__all__ = [
    "ENDPOINT_VERSION",
    "BridgeEvent",
    "BridgeSettings",
    "BridgeStatus",
    "ClientStatus",
    "EndpointFile",
    "ErrorRecord",
    "EventSink",
    "GodotBridge",
    "PlayErrorRecord",
    "checked_tool_names",
    "default_home",
    "endpoint_path",
    "read_endpoint",
]
