"""`star-harness acp`: the ACP agent on stdin/stdout."""

from __future__ import annotations

from acp import run_agent

from ..approvals import APPROVALS
from ..kernel import Context
from ..protocol import ApprovalRouter, HostInfo, SessionHost
from ..protocol.host import SendUpdate
from ..protocol.jsonrpc import MAX_LINE
from ..protocol.stdio import PipeOut, protected_stdio
from .agent import AcpAgent
from .transport import CheckedTransport


async def serve_acp(ctx: Context, info: HostInfo) -> None:
    """Serve one ACP client on stdio until it closes stdin."""
    router = ApprovalRouter(ctx.maybe(APPROVALS))

    def host(send: SendUpdate) -> SessionHost:
        return SessionHost(ctx, router, info, send)

    agent = AcpAgent(host, info)
    try:
        async with protected_stdio() as (reader, out):
            if not isinstance(out, PipeOut):
                raise RuntimeError("acp speaks over pipes: start it from an ACP client (an editor)")
            # Our reader, not the library's: a bad line is answered and the next one read.
            await run_agent(agent, CheckedTransport(reader, out.writer, MAX_LINE))
    finally:
        await agent.aclose()
        router.close()
