"""The kernel: contexts, services, typed events, reversible effects and the plugin contract."""

from .context import (
    Bindable,
    Context,
    MissingServiceError,
    ServiceConflictError,
    ServiceKey,
)
from .effects import Disposer, Scope, ScopeDisposedError, once
from .events import Event, EventBus, Hook, Next, Waterfall
from .layers import LayeredTable
from .plugin import NoConfig, Plugin

__all__ = [
    "Bindable",
    "Context",
    "Disposer",
    "Event",
    "EventBus",
    "Hook",
    "LayeredTable",
    "MissingServiceError",
    "Next",
    "NoConfig",
    "Plugin",
    "Scope",
    "ScopeDisposedError",
    "ServiceConflictError",
    "ServiceKey",
    "Waterfall",
    "once",
]
