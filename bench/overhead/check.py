"""The pre-flight check: floor and loop send the same messages, tools and options."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from starharness.mockllm import MockLlmServer
from starharness.runtime.config import start
from starharness.runtime.loop import AGENTS

from .floor import FloorSession, floor_client, floor_turn
from .loop import loop_turn, registrar, task_profile
from .mock import respond, set_fragment_size
from .workload import SpeakCounter, speak_tool


def _normalised(body: Any) -> Any:
    """A recorded request body with tool-call ids renamed in order of appearance."""
    names: dict[str, str] = {}

    def rename(call_id: str) -> str:
        return names.setdefault(call_id, f"call-{len(names)}")

    messages: list[dict[str, Any]] = []
    for original in body["messages"]:
        message = dict(original)
        if message.get("tool_calls"):
            message["tool_calls"] = [
                {**call, "id": rename(call["id"])} for call in message["tool_calls"]
            ]
        if "tool_call_id" in message:
            message["tool_call_id"] = rename(message["tool_call_id"])
        messages.append(message)
    return {**body, "messages": messages}


async def check_same_requests(fragment_size: int, home: Path) -> str | None:
    """Two turns of one session through each variant; None when their requests match."""
    set_fragment_size(fragment_size)
    async with MockLlmServer(responder=respond) as mock:
        counter = SpeakCounter()
        async with floor_client() as client:
            session = FloorSession("check-floor")
            for _ in range(2):
                await floor_turn(client, mock.base_url + "/chat/completions", session, counter)
        profile = await asyncio.to_thread(task_profile, mock.base_url, home)
        async with await start(profile) as runtime:
            handle = await runtime.ctx.get(AGENTS).create(
                "check-loop", setup=registrar(speak_tool(counter))
            )
            for _ in range(2):
                await loop_turn(handle)
        floor = [_normalised(r.body) for r in mock.requests_for("check-floor")]
        loop = [_normalised(r.body) for r in mock.requests_for("check-loop")]
    if len(floor) != 4 or len(loop) != 4:
        return f"expected 4 requests each, floor sent {len(floor)} and the loop {len(loop)}"
    for index, (a, b) in enumerate(zip(floor, loop, strict=True)):
        if a != b:
            return f"request {index + 1} differs:\n  floor {json.dumps(a)}\n  loop  {json.dumps(b)}"
    if session.ok_turns != 2 or counter.calls != 4:
        return "the check conversation did not complete its turns"
    return None
