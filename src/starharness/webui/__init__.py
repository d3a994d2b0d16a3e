"""starharness.webui: `star-harness web`, the browser UI (chat, NPC transcripts, Godot panel).

A composition-level package: it serves the session protocol over WebSocket and reads the
session store and the Godot bridge; nothing in runtime/, npc/ or godot/ imports it.
"""

from .access import Access
from .run import DEFAULT_PORT, RunningWeb, WebSettings, serve_web, start_web
from .server import STATIC, WebUi

__all__ = [
    "DEFAULT_PORT",
    "STATIC",
    "Access",
    "RunningWeb",
    "WebSettings",
    "WebUi",
    "serve_web",
    "start_web",
]
