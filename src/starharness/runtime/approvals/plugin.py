"""ApprovalsPlugin: provides `ctx.get(APPROVALS)` in the mode its config names."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, model_validator

from ..kernel import Context, Plugin
from .keys import APPROVALS
from .services import InteractiveApprovals, NonInteractiveApprovals
from .types import ApprovalService


class ApprovalsConfig(BaseModel):
    """`interactive` asks a person; `deny` refuses every ask; `allow-list` allows `allow` only."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["interactive", "deny", "allow-list"] = "deny"
    allow: list[str] = []

    @model_validator(mode="after")
    def _allow_needs_allow_list(self) -> ApprovalsConfig:
        if self.allow and self.mode != "allow-list":
            raise ValueError(f"allow is only used with mode 'allow-list', not {self.mode!r}")
        return self


class ApprovalsPlugin(Plugin[ApprovalsConfig]):
    """Provides APPROVALS."""

    Config = ApprovalsConfig
    provides = (APPROVALS,)

    async def setup(self, ctx: Context, config: ApprovalsConfig) -> None:
        ctx.provide(APPROVALS, build_approvals(config))


def build_approvals(config: ApprovalsConfig) -> ApprovalService:
    if config.mode == "interactive":
        return InteractiveApprovals()
    return NonInteractiveApprovals(config.allow)
