"""The sandbox's one refusal: no provider could confine the command, so it does not run."""

from __future__ import annotations

from typing import Final

from ..errors import UserFacingError

SANDBOX_UNAVAILABLE: Final = "SANDBOX_UNAVAILABLE"
"""Failure code the model reads when no sandbox provider works (the command never ran)."""


class SandboxUnavailableError(UserFacingError):
    """No provider in the chain can confine commands here; `reasons` says why each one failed."""

    code = SANDBOX_UNAVAILABLE

    def __init__(self, reasons: dict[str, str]) -> None:
        self.reasons = dict(reasons)
        detail = "; ".join(f"{name}: {why}" for name, why in reasons.items()) or "none configured"
        super().__init__(
            f"{SANDBOX_UNAVAILABLE}: no sandbox provider works here, so the command was not run "
            f"({detail})"
        )
