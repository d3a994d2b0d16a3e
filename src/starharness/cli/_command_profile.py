"""Loading a profile for an agent command: composed in `starharness.composition`, named here
for the CLI."""

from __future__ import annotations

from ..composition import load_for_command, project_folder

__all__ = ["load_for_command", "project_folder"]
