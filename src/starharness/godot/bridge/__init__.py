"""The loopback TCP bridge between the agent and Godot editors."""

from .endpoint import (
    ENDPOINT_VERSION,
    EndpointFile,
    default_home,
    endpoint_path,
    read_endpoint,
)
from .registry import BridgeEvent, EventSink
from .server import GodotBridge, checked_tool_names
from .settings import BridgeSettings
from .status import BridgeStatus, ClientStatus, ErrorRecord, PlayErrorRecord

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
