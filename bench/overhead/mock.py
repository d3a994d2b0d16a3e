"""The mock LLM in a process of its own, and what the client side reads of it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from dataclasses import dataclass
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any

from cores import pin
from starharness.mockllm import ChatRequest, MockLlmServer, ScriptedCall, Success, ToolCalls

from .workload import REPLY, SPEAK_ARGUMENTS

_served: Any = None
"""In the mock process: the request counter shared with the client processes."""
_steps: dict[str, ToolCalls | Success] = {"text": Success(text=REPLY)}


def respond(request: ChatRequest) -> ToolCalls | Success:
    """Every conversation: a tool call for a user message, "ok" after the tool result."""
    if _served is not None:
        _served.value += 1
    return _steps["text"] if request.last_message.role == "tool" else _steps["tool"]


def set_fragment_size(fragment_size: int) -> None:
    """The tool call's arguments are streamed in fragments of this many characters."""
    call = ScriptedCall(name="speak", arguments=SPEAK_ARGUMENTS)
    _steps["tool"] = ToolCalls(calls=[call], fragment_size=fragment_size)


def serve(ports: Queue[int], served: Any, fragment_size: int) -> None:
    """The mock process: serve on core 0 until SIGTERM; the port goes back through `ports`."""
    global _served
    pin(0)
    _served = served
    set_fragment_size(fragment_size)
    asyncio.run(_serve(ports))


async def _serve(ports: Queue[int]) -> None:
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with MockLlmServer(responder=respond) as mock:
        ports.put(mock.port)
        while not stop.is_set():
            # The mock records every request; nothing here reads them, so keep its heap small.
            mock.requests.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of process `pid` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class MockProbe:
    """Reads the mock process's request counter and CPU time from a client process."""

    pid: int
    served: Any

    def sample(self) -> tuple[int, float]:
        return int(self.served.value), cpu_seconds(self.pid)
