"""A rig for code mode: tools, approvals, the sandbox and run_code, with two host tools."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict
from sandbox_support import Rig, make_rig

from starharness.runtime.approvals import Decision
from starharness.runtime.codemode import CodeModeConfig, CodeModePlugin
from starharness.runtime.sandbox import SANDBOX, SANDBOX_RECORD, SandboxRecord
from starharness.runtime.tools import REQUIRES_APPROVAL, TOOLS, ToolFailure, define_tool
from starharness.runtime.tools.run import ToolRunContext


class PriceParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item: str


class SetPriceParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    item: str
    price: int


class Market:
    """Host state the program can change only through tools."""

    def __init__(self) -> None:
        self.prices: dict[str, int] = {"ore": 10, "fuel": 20}
        self.records: list[SandboxRecord] = []


async def code_rig(
    project: Path,
    *,
    provider: str = "bubblewrap",
    market: Market | None = None,
    answers: Sequence[Decision] = (),
    **codemode: Any,
) -> tuple[Rig, Market]:
    """make_rig plus CodeModePlugin; get_price and set_price (approval-tagged) on the agent."""
    rig = await make_rig(project, providers=[provider], tier="read-only", answers=answers)
    config = CodeModeConfig.model_validate(codemode)
    await CodeModePlugin().setup(rig.root.fork("codemode"), config)
    found = market or Market()

    def get_price(args: PriceParams, run: ToolRunContext) -> dict[str, Any] | ToolFailure:
        if args.item not in found.prices:
            return ToolFailure(f"no item {args.item!r}", "unknown_item")
        return {"item": args.item, "price": found.prices[args.item]}

    def set_price(args: SetPriceParams, run: ToolRunContext) -> str:
        found.prices[args.item] = args.price
        return f"{args.item} now {args.price}"

    tools = rig.agent.get(TOOLS)
    tools.register(define_tool("get_price", "The price of an item.", PriceParams, get_price))
    tools.register(
        define_tool(
            "set_price",
            "Set an item's price.",
            SetPriceParams,
            set_price,
            tags=(REQUIRES_APPROVAL,),
        )
    )
    rig.agent.on(SANDBOX_RECORD, found.records.append)
    return rig, found


def records(market: Market, type_: str) -> list[dict[str, Any]]:
    return [dict(record.data) for record in market.records if record.type == type_]


def running(rig: Rig) -> int:
    """Processes the agent's sandbox still owns (every run must leave none)."""
    return rig.root.get(SANDBOX).for_context(rig.agent).owner.running


def spawned(rig: Rig) -> int:
    return rig.root.get(SANDBOX).for_context(rig.agent).owner.spawned
