"""The `none` provider: runs commands as they are. Only with `dangerously_run_unconfined`."""

from __future__ import annotations

from collections.abc import Sequence

from .policy import SandboxPolicy

UNCONFINED_WARNING = (
    "sandbox provider 'none' is on (dangerously_run_unconfined): commands run UNCONFINED, with "
    "your files, your network and your keys"
)


class UnconfinedProvider:
    """Confines nothing. The plugin refuses to put it in the chain without the loud opt-in."""

    name = "none"

    def probe(self) -> str | None:
        return None

    def confine(self, argv: Sequence[str], policy: SandboxPolicy) -> list[str]:
        return list(argv)

    def describe(self, policy: SandboxPolicy) -> str:
        return "UNCONFINED (provider none): nothing is enforced"
