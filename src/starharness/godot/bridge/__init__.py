"""The loopback TCP bridge between the agent and Godot editors."""

from .endpoint import (
    EndpointFile,
    default_home,
    endpoint_path,
    read_endpoint,
)
from .registry import BridgeEvent, EventSink
from .server import (
    GodotBridge,
)
from .settings import BridgeSettings
from .status import (
    BridgeStatus,
    ClientStatus,
    PlayErrorRecord,
)

__all__ = [
    "BridgeEvent",
    "BridgeSettings",
    "BridgeStatus",
    "ClientStatus",
    "EndpointFile",
    "EventSink",
    "GodotBridge",
    "PlayErrorRecord",
    "default_home",
    "endpoint_path",
    "read_endpoint",
]
