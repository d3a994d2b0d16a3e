"""The agent runtime: a kernel of contexts and plugins, and the service packages on it.

Each service package (approvals, llm, loop, prompt, session, telemetry, tools, workspace)
declares its own service key, hooks and events beside the plugin that provides them; import
them from there. This package imports nothing, so `star-harness --help` stays light: the few
names of its own modules that a game uses as well (the error roots, the home folder, an
owner-only file) load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .credentials import create_owner_only
    from .errors import StarHarnessError, UserFacingError
    from .paths import star_harness_home

# Each name and the module of this package that holds it.
_LAZY: dict[str, str] = {
    "StarHarnessError": ".errors",
    "UserFacingError": ".errors",
    "create_owner_only": ".credentials",
    "star_harness_home": ".paths",
}


def __getattr__(name: str) -> Any:
    """Load a name on first use (PEP 562), then keep it as an ordinary attribute."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "StarHarnessError",
    "UserFacingError",
    "create_owner_only",
    "star_harness_home",
]
