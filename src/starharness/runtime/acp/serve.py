"""`star-harness acp`: the ACP agent on stdin/stdout."""

from __future__ import annotations

from acp import run_agent

from ..approvals import APPROVALS
from ..kernel import Context
from ..protocol import ApprovalRouter, HostInfo, SessionHost
from ..protocol.host import SendUpdate
from ..protocol.stdio import PipeOut, protected_stdio
from .agent import AcpAgent


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
            await run_agent(agent, out.writer, reader)
    finally:
        await agent.aclose()
        router.close()
