"""Archetype presets: each archetype's shared agent layer, built once per server on first use.

A preset layer holds what every NPC of the archetype shares: the protocol and the archetype's
sections, its tools and its turn plan, and the three listeners an encounter needs, which route
each event to the encounter whose agent sent it. An encounter's agent layer is made under it
and adds only the NPC's persona, the scene and the encounter's binding, so the tool schemas
and the static prompt prefix are the same objects (and bytes) for every NPC of the archetype.
"""

from __future__ import annotations

import logging
from typing import Any, Final, Protocol

from ...runtime.kernel import Context, Next
from ...runtime.llm import LLM, ProviderProfile
from ...runtime.loop import (
    PRE_STEP,
    REQUEST,
    SESSION_EVENT,
    AgentOptions,
    LoggedEvent,
    OutgoingRequest,
    StepPlan,
)
from ...runtime.prompt import PROMPT
from ...runtime.tools import TOOL_POST_EXECUTE, TOOLS, PostExecute, ToolDefinition
from .archetype_kit import ArchetypeKit
from .game_tools import GameKit
from .plans import DECIDE_ACT_SPEAK, TURN_PLAN, PlanChoice, choose_plan

_log = logging.getLogger("starharness.npc.encounter")

IDENTITY_SECTION: Final = "harness.identity"
"""The runtime's identity section, shadowed by an empty one: an NPC does not know it is an AI."""
IDENTITY_ORDER: Final = -100
PROTOCOL_SECTION: Final = "npc.protocol"
PROTOCOL_ORDER: Final = -50
"""Before the persona, so every NPC of a game shares the cached prefix up to its persona."""
ARCHETYPE_SECTION: Final = "npc.archetype"
ARCHETYPE_ORDER: Final = -25
"""After the protocol, before the persona: shared by every NPC of the archetype."""


class PresetMember(Protocol):
    """What a preset's listeners call on the encounter whose agent an event came from."""

    def on_logged(self, logged: LoggedEvent) -> None: ...

    async def shape_request(
        self, outgoing: OutgoingRequest, next_: Next[OutgoingRequest]
    ) -> OutgoingRequest | None: ...

    async def post_execute(
        self, value: PostExecute, next_: Next[PostExecute]
    ) -> PostExecute | None: ...

    async def pre_step(self, plan: StepPlan, next_: Next[StepPlan]) -> StepPlan | None: ...


class ArchetypePreset:
    """One archetype's layer on one server; encounters join it by their session id."""

    __slots__ = ("_members", "_speech", "kit", "layer", "plan")

    def __init__(
        self, kit: ArchetypeKit, speech: ToolDefinition[Any], plan: PlanChoice, layer: Context
    ) -> None:
        self.kit = kit
        self.plan = plan
        self.layer = layer
        self._speech = speech
        self._members: dict[str, PresetMember] = {}

    def join(self, session_id: str, member: PresetMember) -> None:
        """Route the events of the agent with `session_id` to `member` until it leaves."""
        self._members[session_id] = member

    def leave(self, session_id: str) -> None:
        self._members.pop(session_id, None)

    @property
    def open_encounters(self) -> int:
        """How many encounters' agents run on this preset now."""
        return len(self._members)

    def install(self, hide_identity: bool) -> None:
        """Register the shared sections, tools, plan and routing listeners on the layer."""
        layer, kit = self.layer, self.kit
        prompt = layer.get(PROMPT)
        if hide_identity:
            prompt.section(IDENTITY_SECTION, IDENTITY_ORDER, "")
        prompt.section(PROTOCOL_SECTION, PROTOCOL_ORDER, kit.protocol_text)
        if kit.shared_text:
            prompt.section(ARCHETYPE_SECTION, ARCHETYPE_ORDER, kit.shared_text)
        tools = layer.get(TOOLS)
        for tool in self.plan_tools():
            tools.register(tool)
        layer.provide(TURN_PLAN, self.plan)
        layer.on(SESSION_EVENT, self._on_logged)
        layer.on_waterfall(REQUEST, self._shape_request)
        layer.on_waterfall(TOOL_POST_EXECUTE, self._post_execute)
        # A line left without its claims of a deal not made is recorded in the model's view
        # as the player heard it.
        layer.on_waterfall(PRE_STEP, self._pre_step)

    def plan_tools(self) -> tuple[ToolDefinition[Any], ...]:
        """The tools the plan offers the model: the decision and speech, or every action."""
        if self.plan.plan == DECIDE_ACT_SPEAK:
            # The same two tools on every step, so the cached prompt prefix stays warm.
            return (self.kit.decision_tool, self._speech)
        return self.kit.tools

    def _on_logged(self, logged: LoggedEvent) -> None:
        member = self._members.get(logged.agent.id)
        if member is not None:
            member.on_logged(logged)

    async def _shape_request(
        self, outgoing: OutgoingRequest, next_: Next[OutgoingRequest]
    ) -> OutgoingRequest | None:
        member = self._members.get(outgoing.agent.id)
        if member is None:
            return await next_(outgoing)
        return await member.shape_request(outgoing, next_)

    async def _post_execute(
        self, value: PostExecute, next_: Next[PostExecute]
    ) -> PostExecute | None:
        member = self._members.get(value.run.session_id)
        if member is None:
            return await next_(value)
        return await member.post_execute(value, next_)

    async def _pre_step(self, plan: StepPlan, next_: Next[StepPlan]) -> StepPlan | None:
        member = self._members.get(plan.agent.id)
        if member is None:
            return await next_(plan)
        return await member.pre_step(plan, next_)


class ArchetypePresets:
    """A server's presets: each built on first use under the server's context, then reused."""

    __slots__ = ("_ctx", "_hide_identity", "_kit", "_options", "_presets", "_warned")

    def __init__(
        self, ctx: Context, kit: GameKit, options: AgentOptions, *, hide_identity: bool
    ) -> None:
        self._ctx = ctx
        self._kit = kit
        self._options = options
        self._hide_identity = hide_identity
        self._presets: dict[str, ArchetypePreset] = {}
        self._warned: set[str] = set()

    def profile(self) -> ProviderProfile | None:
        """The provider profile the encounters' agents use, if their provider declares one."""
        return _profile_of(self._ctx, self._options)

    def get(self, archetype: str) -> ArchetypePreset:
        """The preset of `archetype` (the game's default one when it is not declared)."""
        preset = self._presets.get(archetype)
        if preset is not None:
            return preset
        kit = self._kit.archetype(archetype)
        if kit.name != archetype:
            self._undeclared(archetype)
            preset = self._presets[archetype] = self.get(kit.name)
            return preset
        preset = self._presets[archetype] = self._build(kit)
        return preset

    def _build(self, kit: ArchetypeKit) -> ArchetypePreset:
        plan = choose_plan(_profile_of(self._ctx, self._options), kit.turn_plan)
        label = kit.name or "(default)"
        layer = self._ctx.child(f"archetype:{label}")
        preset = ArchetypePreset(kit, self._kit.speech_tool, plan, layer)
        preset.install(self._hide_identity)
        _log.info("archetype %s: preset built, turn plan %s (%s)", label, plan.plan, plan.reason)
        return preset

    def _undeclared(self, archetype: str) -> None:
        if archetype in self._warned or not self._kit.archetypes:
            return
        # Once per name: a world with many such NPCs would otherwise log on every encounter.
        self._warned.add(archetype)
        _log.warning(
            "game %s declares no archetype %r; its NPCs get the default preset (declared: %s)",
            self._kit.game.name,
            archetype,
            ", ".join(sorted(self._kit.archetypes)),
        )

    async def aclose(self) -> None:
        """Undo every preset's layer (after the encounters on it were closed)."""
        presets = list({id(preset): preset for preset in self._presets.values()}.values())
        self._presets.clear()
        for preset in presets:
            await preset.layer.dispose()


def _profile_of(ctx: Context, options: AgentOptions) -> ProviderProfile | None:
    """The provider profile agents with `options` will use, if their provider declares one."""
    llm = ctx.maybe(LLM)
    if llm is None:
        return None
    try:
        provider = llm.get(options.provider)
    except LookupError:
        return None
    profile = getattr(provider, "profile", None)
    return profile if isinstance(profile, ProviderProfile) else None
