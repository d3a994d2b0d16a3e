"""Helpers for the context-management tests: the `task` profile plus context rows, against
the mock LLM, and a responder that plays a long synthetic task."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from loop_support import mock_patch
from pydantic import BaseModel

from stack_support import start_test_runtime
from starharness.mockllm import ChatRequest, ScriptedCall, Step, Success, ToolCalls
from starharness.runtime.config import Patch, Runtime
from starharness.runtime.kernel import Context
from starharness.runtime.llm.wire import to_wire_messages
from starharness.runtime.session import SessionEvent, rebuild_requests
from starharness.runtime.tools import TOOLS, ToolRunContext, define_tool

SPILL_ROW = {"id": "spill", "plugin": "starharness.runtime.context:SpillPlugin"}


def compaction_row(**config: Any) -> dict[str, Any]:
    return {
        "id": "compaction",
        "plugin": "starharness.runtime.context:CompactionPlugin",
        "config": config,
    }


def rows_patch(rows: Sequence[dict[str, Any]]) -> Patch:
    placed = [{**row, "before": "agents"} for row in rows]
    return Patch.of("context-test", placed)


@asynccontextmanager
async def context_runtime(
    base_url: str,
    home: Path,
    rows: Sequence[dict[str, Any]],
    *,
    store: str = "memory",
    path: Path | None = None,
) -> AsyncIterator[Runtime]:
    patches = [mock_patch(base_url, store=store, path=path), rows_patch(rows)]
    async with await start_test_runtime(patches, home=home) as runtime:
        yield runtime


class SizeArgs(BaseModel):
    size: int


def make_blob(size: int, seed: int = 0) -> str:
    """`size` characters of text that differs along its length (so head and tail differ)."""
    unit = f"line {seed:06d} of a long tool result; "
    text = "".join(f"{i:08d} {unit}\n" for i in range(size // (len(unit) + 10) + 1))
    return text[:size]


def register_blob_tool(ctx: Context) -> None:
    async def produce(args: SizeArgs, run: ToolRunContext) -> str:
        return make_blob(args.size, args.size)

    ctx.get(TOOLS).register(
        define_tool(
            "produce",
            "Produce a result of `size` characters.",
            SizeArgs,
            produce,
            concurrency_safe=True,
        )
    )


_SPILL = re.compile(r"spill (\d+)")


def spill_id_in(text: str) -> int | None:
    found = _SPILL.search(text)
    return int(found.group(1)) if found else None


def produce_call(size: int, call_id: str) -> ToolCalls:
    return ToolCalls(
        calls=[ScriptedCall(id=call_id, name="produce", arguments=json.dumps({"size": size}))]
    )


def is_summary_request(request: ChatRequest) -> bool:
    return bool(request.messages) and "compact the history" in request.messages[0].text


def summary_step(request: ChatRequest) -> Step:
    last = request.messages[-1].text
    return Success(text=f"summary of {last.count(chr(10))} lines of history")


def assert_rebuilt_equals_sent(
    events: Sequence[SessionEvent], sent: Sequence[Any], *, after: int = 0
) -> None:
    """Every request the log records (after event `after`: a fork's own) rebuilds to the very
    bytes that were sent."""
    inherited = sum(1 for e in events[:after] if e.type == "request/context")
    rebuilt = rebuild_requests(events)[inherited:]
    assert len(rebuilt) == len(sent), (len(rebuilt), len(sent))
    for index, ((header, messages), body) in enumerate(zip(rebuilt, sent, strict=True)):
        assert header is not None
        wire = to_wire_messages(header["system"], messages)
        assert json.dumps(wire) == json.dumps(body["messages"]), f"request {index} differs"
        assert [t["name"] for t in header["tools"]] == [
            t["function"]["name"] for t in body.get("tools", ())
        ]
