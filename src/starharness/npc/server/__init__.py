"""The NPC server: a Starlette app speaking the frame protocol over WebSocket `/gh`."""

from ...runtime.hostguard import is_loopback
from .app import (
    build_app,
)
from .fanout import Fanout, LocalFanout, PostgresFanout
from .gc_tuning import tune_gc_for_serving
from .npc_server import NpcServer
from .run import RunningServer, serve_game, start_server
from .scene import Scene, SceneSeat
from .security import ExposureError
from .settings import (
    DEFAULT_PORT,
    FanoutSettings,
    LimitsSettings,
    SceneSettings,
    ServerSettings,
    TranscriptSettings,
    TurnSettings,
)

__all__ = [
    "DEFAULT_PORT",
    "ExposureError",
    "Fanout",
    "FanoutSettings",
    "LimitsSettings",
    "LocalFanout",
    "NpcServer",
    "PostgresFanout",
    "RunningServer",
    "Scene",
    "SceneSeat",
    "SceneSettings",
    "ServerSettings",
    "TranscriptSettings",
    "TurnSettings",
    "build_app",
    "is_loopback",
    "serve_game",
    "start_server",
    "tune_gc_for_serving",
]
