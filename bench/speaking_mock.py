"""The mock LLM the load benches run in a process of its own: every answer is one speaking call.

Each request waits `service_ms`, then streams the sample game's speech tool call with one line,
so every NPC turn is exactly one model request.
"""

from __future__ import annotations

import asyncio
import json
from multiprocessing.connection import Connection as Pipe

from cores import pin

LINE = "Welcome aboard, Captain. The docks are busy tonight; mind the cargo lifts."


def speaking_mock_process(pipe: Pipe, service_ms: float, core: int | None = 1) -> None:
    """Serve until `pipe` sends None; the base URL is sent on it first, and any other message
    is answered with the TCP connections the mock has accepted so far."""
    if core is not None:
        pin(core)
    asyncio.run(_mock(pipe, service_ms))


async def _mock(pipe: Pipe, service_ms: float) -> None:
    from starharness.mockllm import MockLlmServer, ScriptedCall, ToolCalls
    from starharness.voyage.actions import DEFAULT_MOOD, SPEECH

    arguments = {SPEECH.line_field: LINE, SPEECH.mood_field: DEFAULT_MOOD, SPEECH.options_field: []}
    answer = ToolCalls(
        calls=[ScriptedCall(name=SPEECH.tool_name, arguments=json.dumps(arguments))],
        fragment_size=16,
        initial_delay_ms=service_ms,
    )
    async with MockLlmServer(responder=lambda _request: answer, keep_requests=0) as mock:
        pipe.send(mock.base_url)
        loop = asyncio.get_running_loop()
        while await loop.run_in_executor(None, pipe.recv) is not None:
            pipe.send(mock.connections_accepted)
