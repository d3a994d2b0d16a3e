"""Plays scenarios for real: the game served in this process, a WebSocket player, the audit."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from .. import composition
from ..npc import NPC_SERVER, Game, GameAction, GameKit, RunningServer, list_transcripts
from ..npc.actions import ACCEPTED_OFFER
from ..runtime.config import ResolvedProfile, start
from ..runtime.session import SESSIONS, SessionStore
from .audit import AuditReader
from .evidence import AuditRow, ModelTurn, PlayerTurn, TurnEvidence
from .outcomes import judge_outcome
from .player import ScriptedPlayer, TurnTimeoutError, scripted_player
from .report import EvalReport, ScenarioReport, ScoredTurn, Target
from .scenarios import Scenario, ScenarioSet, Step
from .transcript import model_turns
from .verdict import Verdict

Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class EvalSettings:
    """How the scenarios are played."""

    target: Target
    offline: bool = False
    turn_timeout_s: float = 300.0
    """A turn without `encounter.idle` by then stops its scenario (the report says so)."""
    patch_files: tuple[Path, ...] = ()


async def run_eval(
    settings: EvalSettings,
    scenarios: ScenarioSet,
    workdir: Path,
    progress: Progress | None = None,
    on_scenario: Callable[[EvalReport], None] | None = None,
) -> EvalReport:
    """Play every scenario on a fresh world in `workdir` and score each turn.

    `on_scenario` sees the report so far after each scenario (a long run on a slow model keeps
    what it measured even when it is stopped).
    """
    report = EvalReport(
        target=settings.target,
        game=scenarios.game,
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    started = time.perf_counter()
    for scenario in scenarios.scenarios:
        if progress is not None:
            progress(f"scenario {scenario.name}")
        played = await _run_scenario(settings, scenarios, scenario, workdir)
        report.scenarios.append(played)
        report.duration_s = time.perf_counter() - started
        if progress is not None:
            progress(f"  {_verdict_line(played)}")
        if on_scenario is not None:
            on_scenario(report)
    report.duration_s = time.perf_counter() - started
    return report


def build_profile(settings: EvalSettings, game: str, world: Path) -> ResolvedProfile:
    """`serve`'s profile on a loopback port 0, a fresh world, sessions in memory, the model."""
    target = settings.target
    return composition.eval_profile(
        game,
        world,
        settings.patch_files,
        llm=composition.LlmChoice(target.provider, target.model, target.base_url),
        offline=settings.offline,
    )


@dataclass(slots=True)
class _EncounterSoFar:
    """What one encounter showed and committed before the turn being scored."""

    npc_name: str = ""
    offers_shown: set[str] = field(default_factory=set[str])
    accepted: set[str] = field(default_factory=set[str])
    last_lines: tuple[str, ...] = ()

    def see_name(self, turn: PlayerTurn) -> None:
        # Frames as they came over the wire: their fields are camelCase.
        for frame in turn.of_type("encounter.opened"):
            self.npc_name = str(frame.get("npcName") or self.npc_name)

    def after(self, turn: PlayerTurn, committed: list[AuditRow]) -> None:
        self.offers_shown.update(str(item.get("id")) for item in turn.offers())
        self.last_lines = tuple(turn.lines()) or self.last_lines
        self.accepted.update(
            str(row.arguments[ACCEPTED_OFFER])
            for row in committed
            if row.arguments.get(ACCEPTED_OFFER)
        )


@dataclass(slots=True)
class _Played:
    encounter: str
    turn: PlayerTurn
    committed_after: int


async def _run_scenario(
    settings: EvalSettings, scenarios: ScenarioSet, scenario: Scenario, workdir: Path
) -> ScenarioReport:
    result = ScenarioReport(scenario.name, scenario.description)
    world = workdir / f"{scenario.name}.world.db"
    profile = await asyncio.to_thread(build_profile, settings, scenarios.game, world)
    played: list[_Played] = []
    async with await start(profile) as runtime:
        running: RunningServer = runtime.ctx.get(NPC_SERVER)
        kit = running.server.kit
        audit = AuditReader(world)
        try:
            await _play(settings, scenario, running, kit, audit, played)
        except TurnTimeoutError as exc:
            result.error = str(exc)
        store = runtime.ctx.get(SESSIONS).store
        await runtime.ctx.get(SESSIONS).flush()
        transcripts = await _transcripts(store, kit)
        available = await asyncio.to_thread(audit.available)
        rows = await asyncio.to_thread(audit.since, 0) if available else []
        result.world = await asyncio.to_thread(audit.check) if available else None
    first_row = 0
    used: set[int] = set()
    taking = frozenset(scenarios.takes_from_player) | needing_consent(kit.game)
    # The world may audit more than the encounter's actions in a turn (gossip passed on while a
    # passage moves the clock): only the game's actions answer to action frames.
    acting = frozenset(action.name for action in kit.game.actions)
    encounters: dict[str, _EncounterSoFar] = {}
    for index, item in enumerate(played, start=1):
        committed_rows = [r for r in rows if first_row < r.id <= item.committed_after]
        first_row = item.committed_after
        model = _match(transcripts.get(item.encounter, []), item.turn, used)
        so_far = encounters.setdefault(item.encounter, _EncounterSoFar())
        so_far.see_name(item.turn)
        committed = [r for r in committed_rows if r.ok and r.action in acting]
        evidence = TurnEvidence(
            scenario=scenario.name,
            index=index,
            player=item.turn,
            model=model,
            committed=committed,
            refused=[r for r in committed_rows if not r.ok],
            max_options=kit.game.speech.max_options,
            audit_available=available,
            min_options=kit.game.speech.min_options,
            npc_name=so_far.npc_name,
            takes_from_player=taking,
            offers_shown=frozenset(so_far.offers_shown),
            accepted_before=frozenset(so_far.accepted),
            previous_lines=so_far.last_lines,
        )
        so_far.after(item.turn, committed)
        result.turns.append(ScoredTurn.of(evidence))
    if scenario.expect is not None:
        result.expected = scenario.expect.describe()
        result.refusal_then = scenario.expect.refusal_then is not None
        result.outcome = (
            judge_outcome(scenario.expect, rows)
            if available
            else Verdict(False, "the world has no audit table to judge the outcome from")
        )
    return result


async def _play(
    settings: EvalSettings,
    scenario: Scenario,
    running: RunningServer,
    kit: GameKit,
    audit: AuditReader,
    played: list[_Played],
) -> None:
    opened = 0
    encounter = ""
    async with scripted_player(running.ws_url, kit.protocol, scenario.player) as player:
        for number, step in enumerate(scenario.steps, start=1):
            if step.open is not None:
                opened += 1
                encounter = f"{scenario.name}-{opened}"
            turn = await _step(player, step, encounter, settings.turn_timeout_s)
            if turn is None:
                continue
            turn.step = number
            last = await asyncio.to_thread(audit.last_id) if await _has_audit(audit) else 0
            played.append(_Played(encounter, turn, last))


async def _step(
    player: ScriptedPlayer, step: Step, encounter: str, limit_s: float
) -> PlayerTurn | None:
    if step.open is not None:
        return await player.open(encounter, step.open, timeout_s=limit_s)
    if step.say is not None:
        return await player.say(encounter, step.say, timeout_s=limit_s)
    if step.pick is not None:
        option = player.option(step.pick)
        if option is not None:
            return await player.pick(encounter, option, timeout_s=limit_s)
        fallback = step.otherwise or "Go on."
        return await player.say(encounter, fallback, timeout_s=limit_s)
    if step.accept is not False:
        offer = player.first_offer(None if step.accept is True else step.accept)
        if offer is not None:
            return await player.pick(encounter, offer, timeout_s=limit_s)
        return await player.say(encounter, step.otherwise or _ACCEPT, timeout_s=limit_s)
    await player.close(encounter)
    return None


_ACCEPT = "Yes, deal."
"""Said by an `accept` step with no offer to pick and no `otherwise`."""


async def _has_audit(audit: AuditReader) -> bool:
    return await asyncio.to_thread(audit.available)


async def _transcripts(store: SessionStore, kit: GameKit) -> dict[str, list[ModelTurn]]:
    contract = kit.game.speech
    found: dict[str, list[ModelTurn]] = {}
    for info in await list_transcripts(store):
        stored = await store.load(info.session_id)
        if stored is not None:
            found[info.encounter] = model_turns(
                stored.events, contract.tool_name, contract.line_field
            )
    return found


def needing_consent(game: Game) -> frozenset[str]:
    """The game's actions that take from the player (they commit only as accepted offers)."""
    return frozenset(
        action.name
        for action in game.actions
        if isinstance(action, GameAction) and action.needs_consent
    )


def _match(turns: list[ModelTurn], player: PlayerTurn, used: set[int]) -> ModelTurn | None:
    """The model turn that ran between the player's frame and the end of its turn."""
    end_ms = player.sent_ms + int(player.turn_s * 1000) + 1
    for turn in turns:
        if id(turn) in used:
            continue
        if player.sent_ms - 1 <= turn.started_ms <= end_ms:
            used.add(id(turn))
            return turn
    return None


def _verdict_line(played: ScenarioReport) -> str:
    """One line for the progress output: the outcome, the turns, and why it stopped, if it did."""
    if played.outcome is None:
        verdict = "no outcome declared"
    else:
        verdict = "task done" if played.outcome.passed else "task NOT done"
    line = f"{played.name}: {verdict}, {len(played.turns)} turn(s)"
    return f"{line}; stopped: {played.error}" if played.error else line
