"""The sessions package's service key (declared here, beside the plugin that provides it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..kernel import ServiceKey

if TYPE_CHECKING:
    from .service import SessionService

SESSIONS: ServiceKey[SessionService] = ServiceKey(
    "sessions", "add the sessions plugin", provider="starharness.runtime.session:SessionsPlugin"
)
