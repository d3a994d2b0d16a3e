"""The terminal client's handler for every down frame: update the state, print plain words."""

from __future__ import annotations

from ...frames import (
    ActionFrame,
    EncounterIdle,
    EncounterOpened,
    ErrorCode,
    ErrorFrame,
    Hud,
    NpcEntry,
    Options,
    SayDelta,
    SayEnd,
    ScenePlayers,
    Welcome,
    WorldEvent,
)
from ..handlers import DownFrameHandler
from .printer import Printer
from .render import error_words, hud_changes, hud_summary, offer_words
from .state import FENCE_PREFIX, Phase, TalkState

# Errors after which the harness still ends the turn with `encounter.idle`.
_IDLE_FOLLOWS = frozenset({ErrorCode.LLM_UNAVAILABLE})
_TURN_PHASES = frozenset({Phase.OPENING, Phase.TURN})


class TalkView(DownFrameHandler):
    """Renders each frame type as lines in the terminal and keeps `TalkState` in step."""

    def __init__(self, state: TalkState, printer: Printer) -> None:
        self._state = state
        self._out = printer
        self._streaming = False

    def show_npcs(self) -> None:
        """List the NPCs at the player's location, numbered for picking; the rest after."""
        present = self._state.present()
        away = [npc for npc in self._state.npcs if npc not in present]
        if not present:
            self._out.line("Nobody is here to talk to.", "dim")
        else:
            self._out.line("Who is here:", "bold")
            for number, npc in enumerate(present, start=1):
                self._out.line(f"  {number}) {_npc_line(npc)}")
        if away:
            elsewhere = ", ".join(f"{npc.name} ({npc.location_id})" for npc in away)
            self._out.line(f"Elsewhere: {elsewhere}", "dim")
        if present:
            self._out.line("Type a number to walk up to someone (/help for commands).", "dim")

    def show_options(self) -> None:
        """List the current encounter's options, numbered for picking; offers stand out."""
        for number, item in enumerate(self._state.options, start=1):
            if item.offer is None:
                self._out.line(f"  {number}) {item.label}", "cyan")
            else:
                offer = offer_words(number, item.label, item.offer)
                self._out.line(f"  {number}) {offer}", "bold yellow")

    def on_welcome(self, frame: Welcome) -> None:
        # A harness of revision 1 sends no revision (the model's default is the newest).
        self._state.revision = frame.revision if "revision" in frame.model_fields_set else 1
        self._state.npcs = list(frame.npcs)
        self._state.hud = dict(frame.hud)
        self._out.line(f"Connected as {self._state.player_id}.", "green")
        self._out.line(f"HUD: {hud_summary(frame.hud, self._state.npc_names())}", "magenta")
        news = frame.hud.get("news")
        if isinstance(news, list):
            # The latest headlines a game's view carries, oldest first, like the ticker.
            for item in reversed(news):
                if isinstance(item, dict) and isinstance(item.get("headline"), str):
                    self._out.line(f"news [{item.get('locationId')}] {item['headline']}", "blue")
        if self._state.phase is Phase.HANDSHAKE:
            self._state.enter(Phase.LOBBY)

    def on_encounter_opened(self, frame: EncounterOpened) -> None:
        if frame.id != self._state.encounter_id:
            return
        self._state.opened = True
        if frame.npcs:
            state = self._state
            state.members = list(frame.npcs)
            state.npc_name = " and ".join(npc.name for npc in frame.npcs)
            who = ", ".join(f"{npc.name} (attitude {npc.attitude})" for npc in frame.npcs)
            self._out.line(f"— {who} notice you —", "bold")
            if state.shares_scenes:
                heard = "Everyone here hears you, other players who talk to them too"
            else:
                heard = "Everyone hears you"
            self._out.line(f"{heard}; @name words speaks to one of them.", "dim")
            return
        self._state.npc_name = frame.npc_name
        self._out.line(f"— {frame.npc_name} notices you (attitude {frame.attitude}) —", "bold")

    def on_say_delta(self, frame: SayDelta) -> None:
        state = self._state
        if frame.id != state.encounter_id:
            return
        if self._streaming and frame.speaker_id != state.speaker_id:
            # Another NPC of the scene speaks: their line starts on a line of its own.
            self._out.end_stream()
            self._streaming = False
        state.speaker_id = frame.speaker_id
        if not self._streaming:
            if state.is_other_player(frame.speaker_id) and frame.speaker_id is not None:
                # Another player of a shared scene: their name, marked as a player's.
                name = frame.speaker_name or state.speaker_name(frame.speaker_id)
                state.others[frame.speaker_id] = name
                self._out.stream(f"{name} (player): ", "bold magenta")
            else:
                self._out.stream(f"{state.speaker_name(frame.speaker_id)}: ", "bold yellow")
            self._streaming = True
        self._out.stream(frame.text)

    def on_say_end(self, frame: SayEnd) -> None:
        if frame.id != self._state.encounter_id:
            return
        if self._streaming and self._state.is_other_player(frame.speaker_id):
            self._out.end_stream()  # a player's line has no NPC's mood
        elif self._streaming:
            self._out.end_stream(f"  ({frame.mood})", "dim")
        else:
            name = self._state.speaker_name(frame.speaker_id)
            self._out.line(f"{name} says nothing. ({frame.mood})", "dim")
        self._streaming = False

    def on_options(self, frame: Options) -> None:
        if frame.id != self._state.encounter_id:
            return
        self._state.options = list(frame.items)
        if self._state.members and frame.speaker_id is not None and frame.items:
            self._out.line(f"Replies to {self._state.speaker_name(frame.speaker_id)}:", "dim")
        self.show_options()

    def on_action(self, frame: ActionFrame) -> None:
        if frame.id != self._state.encounter_id:
            return
        who = f"{self._state.speaker_name(frame.speaker_id)}, " if frame.speaker_id else ""
        if frame.ok:
            self._out.line(f"✔ {who}{frame.name}: {frame.summary}", "green")
        else:
            self._out.line(f"✘ {who}{frame.name} refused: {frame.summary}", "red")

    def on_encounter_idle(self, frame: EncounterIdle) -> None:
        state = self._state
        if frame.id != state.encounter_id:
            return
        self._streaming = False
        self._out.end_stream()
        self._out.restore_prompt()  # after another player's round, input is still awaited
        if state.phase is Phase.SETTLING and not state.fence_ends_on_idle:
            return  # a tick's fence: only its answer ends the wait
        state.fence_id = None
        state.enter(Phase.IDLE)

    def on_error(self, frame: ErrorFrame) -> None:
        state = self._state
        if frame.id is not None and frame.id.startswith(FENCE_PREFIX):
            state.fence_answered(frame.id)  # this client's own fence: nothing to show
            return
        self._out.line(f"! {error_words(frame.code, frame.message)}", "bold red")
        if state.phase is Phase.HANDSHAKE:
            state.fail(f"the harness refused player {state.player_id!r}: {frame.message}")
        elif frame.id is None or frame.id != state.encounter_id:
            return
        elif frame.code is ErrorCode.UNKNOWN_ENCOUNTER or not state.opened:
            # A refused open, or an encounter the harness has already forgotten.
            state.end_encounter()
            self.show_npcs()
        elif frame.code not in _IDLE_FOLLOWS and state.phase in _TURN_PHASES:
            # Either the say was refused before a turn began (no idle will come) or the error
            # ended the turn (its idle follows): the code alone cannot tell (`limit` is both),
            # and reading on at once would send the next line while the NPC may still answer.
            # A fence tells: its answer comes after everything the harness did for the say.
            state.fence_wanted = True

    def on_scene_players(self, frame: ScenePlayers) -> None:
        state = self._state
        if frame.id != state.encounter_id:
            return
        now = {p.id: p.name for p in frame.players if p.id != state.player_id}
        state.others.update(now)
        before, state.in_scene = state.in_scene, now
        if before is None:
            notices = [f"{name} is here." for name in now.values()]
        else:
            notices = [f"{name} left." for pid, name in before.items() if pid not in now]
            notices += [f"{name} joined." for pid, name in now.items() if pid not in before]
        if notices and self._streaming:
            # A notice in the middle of a line: the rest of it starts again under its name.
            self._out.end_stream()
            self._streaming = False
        for notice in notices:
            self._out.line(notice, "dim magenta")

    def on_world_event(self, frame: WorldEvent) -> None:
        self._out.line(f"news [{frame.location_id}] {frame.headline}", "italic blue")

    def on_hud(self, frame: Hud) -> None:
        if frame.player_id != self._state.player_id:
            return
        for change in hud_changes(self._state.hud, frame.data, self._state.npc_names()):
            self._out.line(f"HUD {change}", "magenta")
        self._state.hud = dict(frame.data)


def _npc_line(npc: NpcEntry) -> str:
    where = f" ({npc.location_id})" if npc.location_id else ""
    return f"{npc.name}{where} [{npc.id}]"
