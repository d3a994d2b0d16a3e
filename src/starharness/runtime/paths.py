"""Where user state lives: `$STAR_HARNESS_HOME`, by default `~/.star-harness`."""

from __future__ import annotations

import os
from pathlib import Path

HOME_ENV = "STAR_HARNESS_HOME"


def star_harness_home() -> Path:
    """The directory for user state (credentials, patches, sessions); not created here."""
    configured = os.environ.get(HOME_ENV, "").strip()
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".star-harness"
