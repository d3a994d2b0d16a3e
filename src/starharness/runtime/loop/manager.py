"""`ctx.get(AGENTS)`: create, resume, find and dispose agents; the AgentsPlugin provides it."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..approvals import APPROVAL_ASKED, APPROVAL_DECIDED, ApprovalDecided, ApprovalRequest
from ..errors import StarHarnessError
from ..kernel import Context, Plugin
from ..llm import LLM
from ..session import SESSIONS, SessionEvent
from ..session import event_types as ev
from .agent import Agent, CancelCause
from .hooks import AGENT_CREATED, AGENT_DISPOSED
from .keys import AGENTS
from .options import AgentOptions, VerifyMode
from .view_log import verify_override

Setup = Callable[[Context], Awaitable[object] | object]
"""Registers sections, context providers and tools on the agent's own layer. Never drives."""


class AgentExistsError(StarHarnessError, RuntimeError):
    """An agent for that session id is already running."""


class AgentHandle:
    """What `create` returns: the agent and an idempotent `dispose()`."""

    __slots__ = ("_disposed", "_manager", "agent")

    def __init__(self, manager: AgentManager, agent: Agent) -> None:
        self._manager = manager
        self.agent = agent
        self._disposed = False

    async def dispose(self) -> None:
        """Stop the loop, wait for it, unregister the agent and undo its layer."""
        if self._disposed:
            return
        self._disposed = True
        await self._manager.dispose_agent(self.agent)


class AgentManager:
    """Owns every agent of a process; each agent lives on its own context layer."""

    def __init__(self, ctx: Context, defaults: AgentOptions) -> None:
        self._ctx = ctx
        self.defaults = defaults
        self._agents: dict[str, Agent] = {}
        self._verify_override: VerifyMode | None = verify_override()
        # One pair of listeners for every agent, routed by the request's session id: an agent
        # layer's events reach its ancestors' listeners, so none is registered per agent.
        approvals = _ApprovalLog(self._agents)
        ctx.on(APPROVAL_ASKED, approvals.asked)
        ctx.on(APPROVAL_DECIDED, approvals.decided)

    def get(self, agent_id: str) -> Agent | None:
        return self._agents.get(agent_id)

    def list(self) -> list[Agent]:
        return list(self._agents.values())

    async def create(
        self,
        session_id: str,
        *,
        setup: Setup | None = None,
        options: AgentOptions | None = None,
        meta: dict[str, Any] | None = None,
        parent: Context | None = None,
        seed: Sequence[SessionEvent] = (),
    ) -> AgentHandle:
        """Create the session and agent; `setup` runs first, and a failing setup rolls back.

        `seed` starts the session with another's events (a fork's inherited prefix)."""
        if session_id in self._agents:
            raise AgentExistsError(f"an agent for session {session_id!r} already exists")
        sessions = self._ctx.get(SESSIONS)
        # Setup composes before the session exists, so a failing setup leaves nothing behind.
        layer = await self._set_up(session_id, setup, parent)
        try:
            session = sessions.create(session_id, meta=meta, seed=seed)
        except BaseException:
            await layer.dispose()
            raise
        return self._publish(layer, session, options)

    async def resume(
        self,
        session_id: str,
        *,
        setup: Setup | None = None,
        options: AgentOptions | None = None,
        parent: Context | None = None,
    ) -> AgentHandle:
        """Load a session from the store and run an agent on it."""
        if session_id in self._agents:
            raise AgentExistsError(f"an agent for session {session_id!r} already exists")
        sessions = self._ctx.get(SESSIONS)
        session = await sessions.resume(session_id)
        try:
            layer = await self._set_up(session_id, setup, parent)
        except BaseException:
            sessions.close(session_id)
            raise
        return self._publish(layer, session, options)

    async def _set_up(
        self, session_id: str, setup: Setup | None, parent: Context | None
    ) -> Context:
        layer = (parent or self._ctx).child(f"agent:{session_id}")
        try:
            if setup is not None:
                result = setup(layer)
                # None first: most setups are plain functions, and the ABC check is not free.
                if result is not None and inspect.isawaitable(result):
                    await result
        except BaseException:
            await layer.dispose()
            raise
        return layer

    def _publish(self, layer: Context, session: Any, options: AgentOptions | None) -> AgentHandle:
        agent = Agent(
            layer, session, options or self.defaults, verify_override=self._verify_override
        )
        self._agents[agent.id] = agent
        layer.emit(AGENT_CREATED, agent)
        return AgentHandle(self, agent)

    async def dispose_agent(self, agent: Agent) -> None:
        await agent.aclose()
        if self._agents.get(agent.id) is agent:
            del self._agents[agent.id]
        agent.ctx.emit(AGENT_DISPOSED, agent)
        await agent.ctx.dispose()
        self._ctx.get(SESSIONS).close(agent.id)

    async def aclose(self) -> None:
        for agent in list(self._agents.values()):
            agent.cancel(CancelCause("disposed"))
        for agent in list(self._agents.values()):
            await self.dispose_agent(agent)


class _ApprovalLog:
    """Every approval question and answer goes into the log of the agent that asked."""

    __slots__ = ("_agents",)

    def __init__(self, agents: dict[str, Agent]) -> None:
        self._agents = agents

    def asked(self, request: ApprovalRequest) -> None:
        agent = self._agents.get(request.session_id)
        if agent is None:  # not one of this manager's agents (a bare tool run, say)
            return
        agent.log(
            ev.APPROVAL_ASKED,
            ev.ApprovalAskedData(
                call_id=request.call_id,
                tool=request.tool,
                arguments=request.arguments,
                reason=request.reason,
            ),
        )

    def decided(self, answer: ApprovalDecided) -> None:
        request = answer.request
        agent = self._agents.get(request.session_id)
        if agent is None:
            return
        agent.log(
            ev.APPROVAL_DECIDED,
            ev.ApprovalDecidedData(
                call_id=request.call_id,
                tool=request.tool,
                decision=str(answer.decision),
                message=answer.message,
            ),
        )


class AgentsConfig(BaseModel):
    """Defaults for every agent the process creates."""

    model_config = ConfigDict(extra="forbid")

    provider: str | None = None
    model: str | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_steps: int = Field(default=16, ge=1, le=1000)
    turn_timeout_s: float | None = Field(default=None, gt=0)
    log_chunks: bool = True
    verify_view: VerifyMode = "projection"
    """Check each request against the log before it is sent (`rebuild`: from the whole log)."""


class AgentsPlugin(Plugin[AgentsConfig]):
    """Provides `ctx.get(AGENTS)`."""

    Config = AgentsConfig
    inject = (SESSIONS, LLM)
    provides = (AGENTS,)

    async def setup(self, ctx: Context, config: AgentsConfig) -> None:
        defaults = AgentOptions(
            provider=config.provider,
            model=config.model,
            max_tokens=config.max_tokens,
            temperature=config.temperature,
            max_steps=config.max_steps,
            turn_timeout_s=config.turn_timeout_s,
            log_chunks=config.log_chunks,
            verify_view=config.verify_view,
        )
        manager = AgentManager(ctx, defaults)
        ctx.provide(AGENTS, manager)
        ctx.scope.add(manager.aclose)
