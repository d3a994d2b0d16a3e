"""Each NPC's static prompt prefix, evaluated by a caching model server before anyone talks.

On a local model server the longest part of a greeting is the NPC's system message and tools
(about 2,000 tokens for the sample game's NPCs: 40 s on two busy cores), and then its scene (about
300 tokens: 8 s). The server keeps evaluated prompts in its cache, so sending each NPC's prefix
once, with one token to generate, while no player talks, leaves a greeting little to evaluate:
the prefix is followed by the opening every player's scene with the NPC shares, where the world
says what it is (`SharesSceneOpening`), so the greeting evaluates the player's part alone. Only
for providers whose profile asks for it (`ProviderProfile.warm_prefixes`); a cloud model is
never sent these requests.

The prefix is built as an encounter builds it (the archetype's preset layer, then the NPC's
persona) and a test holds it byte-equal to the first request of a real encounter. Warming
stops when any encounter opens (a player's request must not queue behind more of them) and
when the server closes; a greeting waits for the request in flight before its turn begins, so
its turn limit counts only its own prompt; a failure is logged once and ends it, never a
player's turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final

from ...runtime.kernel import Context
from ...runtime.llm import (
    LLM,
    LlmError,
    LlmRequest,
    NamedToolChoice,
    ProviderProfile,
    ToolSchema,
    UserMessage,
)
from ...runtime.loop import AgentOptions
from ...runtime.prompt import PROMPT
from ...runtime.tools import TOOLS
from ..world import NpcCard
from .encounter import PERSONA_ORDER, PERSONA_SECTION
from .plans import DECIDE_ACT_SPEAK
from .presets import ArchetypePresets

_log = logging.getLogger("starharness.npc.encounter")
_CONTEXT_SOURCE: Final = "context"
"""The source the runtime logs dynamic context under (an encounter's scene is one)."""


@dataclass(frozen=True, slots=True)
class StaticPrefix:
    """What every request of an NPC's encounters begins with."""

    system: str
    tools: tuple[ToolSchema, ...]
    forced: str | None
    """The tool its first request forces (the decision, on decide-act-speak)."""


async def static_prefix(presets: ArchetypePresets, npc: NpcCard) -> StaticPrefix:
    """`npc`'s system message and tools, from its archetype's preset and its persona."""
    preset = presets.get(npc.archetype)
    layer = preset.layer.child(f"prefix:{npc.id}")
    try:
        prompt = layer.get(PROMPT)
        prompt.section(PERSONA_SECTION, PERSONA_ORDER, npc.persona)
        system = prompt.assemble(layer)
        tools = tuple(layer.get(TOOLS).schemas())
    finally:
        await layer.dispose()
    decides = preset.plan.plan == DECIDE_ACT_SPEAK
    return StaticPrefix(system, tools, preset.kit.decision_tool.name if decides else None)


class PrefixWarmer:
    """Owns the one task that warms the server's cache with every NPC's prefix."""

    def __init__(
        self,
        ctx: Context,
        presets: ArchetypePresets,
        options: AgentOptions,
        npcs: Callable[[], Awaitable[Sequence[NpcCard]]],
        busy: Callable[[], bool],
        scene_opening: Callable[[str], Awaitable[str]] | None = None,
    ) -> None:
        self._ctx = ctx
        self._presets = presets
        self._options = options
        self._npcs = npcs
        self._busy = busy
        self._scene_opening = scene_opening
        self._task: asyncio.Task[None] | None = None
        self._in_flight: asyncio.Event | None = None
        """Set when the warming request in flight has ended (None: none in flight)."""
        self._yielded = False
        self.warmed: list[str] = []
        """NPC ids whose prefix the server evaluated, in order (for tests and the log)."""

    def start(self, profile: ProviderProfile | None) -> bool:
        """Begin warming if `profile` asks for it; whether it began."""
        if profile is None or not profile.warm_prefixes or self._task is not None:
            return False
        self._task = asyncio.get_running_loop().create_task(self._run(), name="prefix warming")
        return True

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    @property
    def in_flight(self) -> bool:
        """Whether the model server is evaluating a prefix for this warmer right now."""
        return self._in_flight is not None

    async def yield_to_player(self) -> None:
        """Warm no more, and wait until the request in flight (if any) has ended.

        A local server evaluates one prompt at a time: a greeting sent now would wait behind
        the prefix in flight (40 s or more on two busy cores) with its turn limit running.
        Waiting here first lets that limit count the greeting's own prompt only.
        """
        self._yielded = True
        if self._in_flight is not None:
            await self._in_flight.wait()

    async def wait(self) -> None:
        """Until warming ended by itself (tests)."""
        if self._task is not None:
            await asyncio.shield(self._task)

    async def _run(self) -> None:
        llm = self._ctx.get(LLM)
        provider = llm.get(self._options.provider)
        model = self._options.model or provider.default_model
        began = time.perf_counter()
        for npc in await self._npcs():
            if self._yielded or self._busy():
                _log.info(
                    "prefix warming stopped: a player is talking (%d warmed)", len(self.warmed)
                )
                return
            if not npc.alive:
                continue
            prefix = await static_prefix(self._presets, npc)
            opening = await self._opening(npc.id)
            request = LlmRequest(
                model=model,
                system=prefix.system,
                # As an encounter logs its scene: a context message of its own, first.
                messages=[UserMessage(opening, source=_CONTEXT_SOURCE)] if opening else [],
                session_id=f"prefix-warming:{npc.id}",
                tools=prefix.tools,
                tool_choice=NamedToolChoice(prefix.forced) if prefix.forced else "none",
                max_tokens=1,
            )
            self._in_flight = asyncio.Event()
            try:
                async for _ in llm.stream(request, provider=provider.name):
                    pass
            except LlmError as exc:
                _log.warning(
                    "prefix warming stopped: the model server refused %s (%s)", npc.id, exc
                )
                return
            finally:
                self._in_flight.set()
                self._in_flight = None
            self.warmed.append(npc.id)
        _log.info(
            "prefix warming: %d NPC prefixes evaluated in %.1f s",
            len(self.warmed),
            time.perf_counter() - began,
        )

    async def _opening(self, npc_id: str) -> str:
        """The NPC's scene opening, or "" (and the prefix is warmed without it) when the world
        has none or fails to read it."""
        if self._scene_opening is None:
            return ""
        try:
            return await self._scene_opening(npc_id)
        except Exception as exc:
            _log.warning("prefix warming: no scene opening for %s (%s)", npc_id, exc)
            return ""
