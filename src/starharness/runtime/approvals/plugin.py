"""ApprovalsPlugin: provides `ctx.get(APPROVALS)` under the policy its config names."""

from __future__ import annotations

from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, model_validator

from ..kernel import Context, Plugin
from .keys import APPROVALS
from .services import InteractiveApprovals, NonInteractiveApprovals
from .types import ApprovalService

_LEGACY_MODES = {"interactive": "ask", "deny": "never", "allow-list": "never"}


class ApprovalsConfig(BaseModel):
    """`ask` asks a person (the default of `chat`); `never` asks no one (run, mcp, CI).

    Tools in `allow` are allowed without asking under either policy (`--allow TOOL`).
    The old `mode` key (interactive / deny / allow-list) is still read.
    """

    model_config = ConfigDict(extra="forbid")

    policy: Literal["ask", "never"] = "never"
    allow: list[str] = []

    @model_validator(mode="before")
    @classmethod
    def _legacy_mode(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        values = cast(dict[str, Any], data)
        if "mode" not in values:
            return values
        values = dict(values)
        mode = values.pop("mode")
        if mode is not None:
            if mode not in _LEGACY_MODES:
                raise ValueError(f"unknown approvals mode {mode!r}; use policy: ask or never")
            values.setdefault("policy", _LEGACY_MODES[mode])
        return values


class ApprovalsPlugin(Plugin[ApprovalsConfig]):
    """Provides APPROVALS."""

    Config = ApprovalsConfig
    provides = (APPROVALS,)

    async def setup(self, ctx: Context, config: ApprovalsConfig) -> None:
        ctx.provide(APPROVALS, build_approvals(config))


def build_approvals(config: ApprovalsConfig) -> ApprovalService:
    if config.policy == "ask":
        return InteractiveApprovals(allow=config.allow)
    return NonInteractiveApprovals(config.allow)
