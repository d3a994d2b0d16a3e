"""Session logs: append-only events, the model history projected from them, and their stores."""

from . import event_types
from .errors import (
    SessionClosedError,
    SessionCorruptError,
    SessionError,
    SessionExistsError,
    SessionNotFoundError,
    StoreClosedError,
    StoredEventError,
    StoreError,
    StoreFormatError,
    StoreUnreachableError,
    StoreWriteError,
)
from .events import (
    FrozenDict,
    SessionDataError,
    SessionEvent,
    freeze_data,
    thaw,
)
from .keys import SESSIONS
from .kinds import EventKind, declared_kinds, kind_named, payload
from .memory_store import MemoryStore
from .plugin import SessionsConfig, SessionsPlugin, default_sessions_path
from .projection import (
    Projection,
    rebuild_requests,
)
from .service import SessionService
from .session import (
    EventListener,
    Session,
)
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
    message_to_data,
    replace_op,
)

__all__ = [
    "SESSIONS",
    "SURFACE",
    "VIEW_REWRITE",
    "EventKind",
    "EventListener",
    "FrozenDict",
    "MemoryStore",
    "MessageData",
    "Projection",
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
    "StoredEventError",
    "StoredSession",
    "Surface",
    "SurfaceReplace",
    "UnloggedViewError",
    "ViewError",
    "ViewRewriteData",
    "declared_kinds",
    "default_sessions_path",
    "event_types",
    "freeze_data",
    "kind_named",
    "message_to_data",
    "payload",
    "rebuild_requests",
    "replace_op",
    "thaw",
]
