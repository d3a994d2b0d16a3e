"""The provider contract: probe whether it works here, and wrap an argv so it runs confined."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .policy import SandboxPolicy


class SandboxProvider(Protocol):
    """One way to confine commands (bubblewrap, Landlock, Seatbelt, ...)."""

    name: str

    def probe(self) -> str | None:
        """None when the provider works here, else why not (blocking: call it in a thread)."""
        ...

    def confine(self, argv: Sequence[str], policy: SandboxPolicy) -> list[str]:
        """The argv that runs `argv` under `policy`; the caller spawns it."""
        ...

    def describe(self, policy: SandboxPolicy) -> str:
        """One line for the model and the log: what this provider enforces for `policy`."""
        ...
