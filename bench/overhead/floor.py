"""The floor: the same turns by hand on bare httpx, with as little work as they allow."""

from __future__ import annotations

import json
from typing import Any

import httpx

from .workload import FLOOR_TOOLS, MODEL, PROMPT, REPLY, SYSTEM, TOOL_RESULT, SpeakCounter


class FloorSession:
    """One conversation as bare code keeps it: its headers and its message list."""

    __slots__ = ("headers", "messages", "ok_turns")

    def __init__(self, session_id: str) -> None:
        self.headers = {
            "accept": "text/event-stream",
            "content-type": "application/json",
            "X-Star-Harness-Session": session_id,
        }
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
        self.ok_turns = 0


def floor_client() -> httpx.AsyncClient:
    # The same pool limits as the provider's own client, so neither side churns connections.
    return httpx.AsyncClient(
        limits=httpx.Limits(max_connections=200, max_keepalive_connections=100)
    )


async def floor_request(
    client: httpx.AsyncClient, url: str, session: FloorSession
) -> tuple[str, list[list[str]]]:
    """One streamed request: the text and the tool calls ([id, name, arguments]) it returned."""
    body = json.dumps(
        {
            "model": MODEL,
            "messages": session.messages,
            "tools": FLOOR_TOOLS,
            "tool_choice": "auto",
            "stream": True,
            "stream_options": {"include_usage": True},
        },
        separators=(",", ":"),
        ensure_ascii=False,
    ).encode()
    text: list[str] = []
    calls: list[list[str]] = []
    async with client.stream("POST", url, content=body, headers=session.headers) as response:
        if response.status_code != 200:
            raise RuntimeError(f"mock answered {response.status_code}")
        # Read to the end (past [DONE]) so the connection goes back to the pool.
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            choices = json.loads(line[6:])["choices"]
            if not choices:
                continue
            delta = choices[0]["delta"]
            content = delta.get("content")
            if content:
                text.append(content)
            for call in delta.get("tool_calls") or ():
                index = call["index"]
                if index == len(calls):
                    calls.append([call.get("id") or "", call["function"].get("name") or "", ""])
                calls[index][2] += call["function"].get("arguments") or ""
    return "".join(text), calls


async def _speak(args: dict[str, Any], counter: SpeakCounter) -> str:
    if not isinstance(args.get("line"), str):
        raise ValueError("speak needs a line")
    counter.calls += 1
    return TOOL_RESULT


async def floor_turn(
    client: httpx.AsyncClient, url: str, session: FloorSession, counter: SpeakCounter
) -> None:
    """User line, tool call, tool result, reply; counts the turn if it went as it should."""
    messages = session.messages
    messages.append({"role": "user", "content": PROMPT})
    text, calls = await floor_request(client, url, session)
    messages.append(
        {
            "role": "assistant",
            "content": text or None,
            "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
                for cid, name, args in calls
            ],
        }
    )
    for call_id, _name, arguments in calls:
        result = await _speak(json.loads(arguments), counter)
        messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
    reply, more = await floor_request(client, url, session)
    messages.append({"role": "assistant", "content": reply})
    if len(calls) == 1 and reply == REPLY and not more:
        session.ok_turns += 1
