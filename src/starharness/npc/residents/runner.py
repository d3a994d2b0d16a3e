"""Running a resident: one turn in a fresh session after each tick, through the agent loop."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final

from ...runtime.codemode import RUN_CODE, interpreter, run_code_tool
from ...runtime.errors import StarHarnessError
from ...runtime.kernel import Context
from ...runtime.llm import UserMessage
from ...runtime.loop import AGENTS, SESSION_EVENT, AgentOptions, LoggedEvent
from ...runtime.prompt import PROMPT
from ...runtime.sandbox import SANDBOX, SandboxUnavailableError
from ...runtime.session import event_types as ev
from ...runtime.tools import TOOLS, ToolDefinition
from ..actions import ENCOUNTER, ActionAttempt, EncounterBinding, action_tool
from ..world import NewsItem, World
from ..world_calls import WorldCalls
from .resident import Resident

_log = logging.getLogger("starharness.npc.residents")

RESIDENT_KIND: Final = "npc-resident"
"""`meta.kind` of a resident's session, so its transcripts are kept apart from encounters'."""
INSTRUCTIONS_SECTION: Final = "npc.resident"
INSTRUCTIONS_ORDER: Final = 0


class ResidentDefinitionError(StarHarnessError, ValueError):
    """A resident was declared or selected wrongly; the message says what to change."""


@dataclass(frozen=True, slots=True)
class ResidentTurn:
    """What one turn of a resident did: its session, how the turn ended, every attempt."""

    session_id: str
    reason: str
    attempts: tuple[ActionAttempt, ...]
    events: tuple[NewsItem, ...] = field(default=())
    """The committed attempts the game turned into news, in order."""


class ResidentRunner:
    """Runs one resident of a server; turns never overlap, each gets a fresh session.

    A fresh session per tick keeps the resident's context bounded however long the server
    runs: what it did yesterday is in the world (prices, news), which the brief shows.
    """

    def __init__(
        self,
        ctx: Context,
        resident: Resident,
        world: World,
        options: AgentOptions,
        *,
        calls: WorldCalls,
        ended: Callable[[str], None] | None = None,
    ) -> None:
        self._ctx = ctx
        self.resident = resident
        self._world = world
        self._options = (
            options
            if resident.max_steps is None
            else replace(options, max_steps=resident.max_steps)
        )
        self._calls = calls
        self._ended = ended
        self._tools = _resolve(resident)
        self._code: ToolDefinition[Any] | None = None
        self._code_checked = resident.code_mode is None
        self._lock = asyncio.Lock()

    @property
    def tools(self) -> tuple[ToolDefinition[Any], ...]:
        """The resident's tools (run_code last, once it is known to work), built once."""
        return self._tools if self._code is None else (*self._tools, self._code)

    async def _code_mode(self) -> None:
        """Build run_code once, if the resident asks for it and the sandbox works here."""
        if self._code_checked:
            return
        self._code_checked = True
        config = self.resident.code_mode
        assert config is not None
        name = self.resident.name
        sandbox = self._ctx.maybe(SANDBOX)
        if sandbox is None:
            _log.warning(
                "resident %s: code mode is off: the profile has no sandbox row "
                "(starharness.runtime.sandbox:SandboxPlugin); it calls its actions one by one",
                name,
            )
            return
        try:
            await sandbox.chain.provider()
        except SandboxUnavailableError as error:
            _log.warning(
                "resident %s: code mode is off (%s); it calls its actions one by one", name, error
            )
            return
        actions = [tool.name for tool in self._tools]
        allowed = actions if config.allow is None else [a for a in config.allow if a in actions]
        limits = config.model_copy(update={"every_agent": False, "allow": allowed})
        self._code = run_code_tool(
            limits.settings(await asyncio.to_thread(interpreter, config.python))
        )
        _log.info("resident %s: code mode on (%s may call %s)", name, RUN_CODE, allowed)

    async def run(self, days: int) -> ResidentTurn:
        """Brief the resident on the world after `days` and let it act; one turn at a time."""
        async with self._lock:
            return await self._turn(days)

    async def _turn(self, days: int) -> ResidentTurn:
        resident = self.resident
        await self._code_mode()
        tools_now = self.tools
        brief = await self._calls.run(resident.brief, self._world, days)
        attempts: list[ActionAttempt] = []
        ended: list[ev.TurnEndData] = []
        binding = EncounterBinding(
            self._world, resident.name, "", attempts.append, calls=self._calls
        )

        def observe(logged: LoggedEvent) -> None:
            if logged.event.type == ev.TURN_END:
                ended.append(ev.payload(logged.event, ev.TURN_END))

        def setup(layer: Context) -> None:
            layer.get(PROMPT).section(
                INSTRUCTIONS_SECTION, INSTRUCTIONS_ORDER, resident.instructions
            )
            tools = layer.get(TOOLS)
            for tool in tools_now:
                tools.register(tool)
            layer.provide(ENCOUNTER, binding)
            layer.on(SESSION_EVENT, observe)

        session_id = f"{resident.name}-{int(time.time() * 1000)}-{secrets.token_hex(4)}"
        meta = {"kind": RESIDENT_KIND, "resident": resident.name, "days": days}
        handle = await self._ctx.get(AGENTS).create(
            session_id, setup=setup, options=self._options, meta=meta
        )
        try:
            handle.agent.followup(UserMessage(brief, source="clock"))
            await handle.agent.when_idle()
        finally:
            await handle.dispose()
            if self._ended is not None:
                self._ended(session_id)
        reason = ended[-1]["reason"] if ended else "not run"
        _log.info("resident %s: turn %s ended (%s)", resident.name, session_id, reason)
        if reason != "completed":
            _log.warning(
                "resident %s: the turn ended (%s): %s",
                resident.name,
                reason,
                (ended[-1].get("error") if ended else None) or "no detail",
            )
        events = tuple(
            event
            for attempt in attempts
            if attempt.ok and (event := resident.news(attempt)) is not None
        )
        return ResidentTurn(session_id, reason, tuple(attempts), events)


def _resolve(resident: Resident) -> tuple[ToolDefinition[Any], ...]:
    tools: dict[str, ToolDefinition[Any]] = {}
    for item in resident.actions:
        tool = _as_tool(resident, item)
        if tool.name in tools:
            raise ResidentDefinitionError(
                f"resident {resident.name!r}: two actions are named {tool.name!r}"
            )
        tools[tool.name] = tool
    if not tools:
        raise ResidentDefinitionError(f"resident {resident.name!r} has no actions")
    return tuple(tools.values())


def _as_tool(resident: Resident, item: object) -> ToolDefinition[Any]:
    tool = action_tool(item)
    if tool is None:
        raise ResidentDefinitionError(
            f"resident {resident.name!r}: an action must come from define_game_action (or be a "
            f"tool), got {item!r}"
        )
    return tool
