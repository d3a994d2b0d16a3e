"""Session logs: append-only events, the model history projected from them, and their stores."""

from . import event_types
from .errors import (
    SessionClosedError,
    SessionCorruptError,
    SessionError,
    SessionExistsError,
    SessionNotFoundError,
    StoreClosedError,
    StoreError,
    StoreFormatError,
    StoreUnreachableError,
    StoreWriteError,
)
from .events import FrozenDict, SessionDataError, SessionEvent, data_to_json, freeze_data, thaw
from .keys import SESSIONS
from .memory_store import MemoryStore
from .plugin import SessionsConfig, SessionsPlugin, default_sessions_path
from .projection import (
    MODEL_VISIBLE,
    Projection,
    RebuiltRequest,
    event_messages,
    event_to_message,
    rebuild_requests,
)
from .recovery import close_interrupted_turn
from .service import SessionService
from .session import EventListener, EventView, Session, epoch_ms
from .sqlite import SqliteStore
from .store import SessionInfo, SessionStore, StoredSession
from .view import (
    SURFACE,
    VIEW_REWRITE,
    MessageData,
    Surface,
    SurfaceReplace,
    UnloggedViewError,
    ViewError,
    ViewRewriteData,
    data_to_message,
    message_to_data,
    replace_op,
)

__all__ = [
    "MODEL_VISIBLE",
    "SESSIONS",
    "SURFACE",
    "VIEW_REWRITE",
    "EventListener",
    "EventView",
    "FrozenDict",
    "MemoryStore",
    "MessageData",
    "Projection",
    "RebuiltRequest",
    "Session",
    "SessionClosedError",
    "SessionCorruptError",
    "SessionDataError",
    "SessionError",
    "SessionEvent",
    "SessionExistsError",
    "SessionInfo",
    "SessionNotFoundError",
    "SessionService",
    "SessionStore",
    "SessionsConfig",
    "SessionsPlugin",
    "SqliteStore",
    "StoreClosedError",
    "StoreError",
    "StoreFormatError",
    "StoreUnreachableError",
    "StoreWriteError",
    "StoredSession",
    "Surface",
    "SurfaceReplace",
    "UnloggedViewError",
    "ViewError",
    "ViewRewriteData",
    "close_interrupted_turn",
    "data_to_json",
    "data_to_message",
    "default_sessions_path",
    "epoch_ms",
    "event_messages",
    "event_to_message",
    "event_types",
    "freeze_data",
    "message_to_data",
    "rebuild_requests",
    "replace_op",
    "thaw",
]
