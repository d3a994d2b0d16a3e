"""Finding mono's compiler and runtime for the Unity client's tests (skipped where absent, a
failure under CI, which must install them)."""

from __future__ import annotations

import os
import shutil

import pytest


def mono_tool(name: str) -> str:
    """The path of `mcs` or `mono`."""
    found = shutil.which(name)
    if found is None:
        reason = f"{name} is not installed (Debian: apt-get install -y mono-mcs)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI must install it")
        pytest.skip(reason)
    return found
