"""A small client for the tests: posts chat requests and parses SSE by hand (plain httpx)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

SESSION = "X-Star-Harness-Session"
USER_HI = [{"role": "user", "content": "hi"}]


def chat_body(stream: bool = True, messages: list[dict[str, Any]] | None = None, **extra: Any):
    body: dict[str, Any] = {"model": "mock-model", "messages": messages or USER_HI}
    body["stream"] = stream
    body.update(extra)
    return body


def session_headers(session: str | None) -> dict[str, str]:
    return {} if session is None else {SESSION: session}


@dataclass
class Streamed:
    """A streamed answer: status, headers, raw body and the decoded `data:` payloads."""

    status: int
    headers: httpx.Headers
    raw: bytes
    events: list[dict[str, Any]] = field(default_factory=list)
    done: bool = False

    def deltas(self) -> list[dict[str, Any]]:
        return [e["choices"][0]["delta"] for e in self.events if e.get("choices")]

    def pieces(self, key: str) -> list[str]:
        return [d[key] for d in self.deltas() if d.get(key)]

    @property
    def text(self) -> str:
        return "".join(self.pieces("content"))

    @property
    def reasoning(self) -> str:
        return "".join(self.pieces("reasoning_content"))

    def tool_calls(self) -> list[dict[str, str]]:
        """Calls rebuilt from the deltas: id, name and concatenated arguments per index."""
        calls: dict[int, dict[str, str]] = {}
        for delta in self.deltas():
            for part in delta.get("tool_calls", []):
                call = calls.setdefault(part["index"], {"id": "", "name": "", "arguments": ""})
                call["id"] = part.get("id") or call["id"]
                function = part.get("function", {})
                call["name"] = function.get("name") or call["name"]
                call["arguments"] += function.get("arguments", "")
        return [calls[index] for index in sorted(calls)]

    @property
    def finish_reason(self) -> str | None:
        reasons = [e["choices"][0]["finish_reason"] for e in self.events if e.get("choices")]
        return next((r for r in reversed(reasons) if r), None)

    @property
    def usage(self) -> dict[str, Any]:
        return next(e["usage"] for e in reversed(self.events) if e.get("usage"))


def parse_sse(raw: bytes) -> tuple[list[dict[str, Any]], bool]:
    """Decode `data:` events; returns (payloads, saw [DONE]). Raises on non-JSON data."""
    events: list[dict[str, Any]] = []
    done = False
    for block in raw.decode("utf-8").split("\n\n"):
        data = "\n".join(
            line.removeprefix("data:").removeprefix(" ")
            for line in block.split("\n")
            if line.startswith("data:")
        )
        if not data:
            continue
        if data == "[DONE]":
            done = True
            continue
        events.append(json.loads(data))
    return events, done


async def read_stream(
    client: httpx.AsyncClient, base_url: str, session: str | None = None, **body: Any
) -> tuple[httpx.Response, bytes]:
    """POST a streaming chat request and read the raw body."""
    request_body = chat_body(stream=True, **body)
    async with client.stream(
        "POST",
        f"{base_url}/chat/completions",
        json=request_body,
        headers=session_headers(session),
    ) as response:
        raw = b"".join([chunk async for chunk in response.aiter_raw()])
    return response, raw


async def stream_chat(
    client: httpx.AsyncClient, base_url: str, session: str | None = None, **body: Any
) -> Streamed:
    """POST a streaming chat request and decode its events."""
    response, raw = await read_stream(client, base_url, session, **body)
    result = Streamed(response.status_code, response.headers, raw)
    if response.status_code == 200:
        result.events, result.done = parse_sse(raw)
    return result


async def post_chat(
    client: httpx.AsyncClient,
    base_url: str,
    session: str | None = None,
    stream: bool = False,
    **body: Any,
) -> httpx.Response:
    """POST a chat request and return the whole response."""
    return await client.post(
        f"{base_url}/chat/completions",
        json=chat_body(stream=stream, **body),
        headers=session_headers(session),
    )
