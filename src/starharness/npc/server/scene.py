"""A scene: several NPCs (1-4) and one player, or several players of one place (a shared scene).

Each player has a seat (`SceneSeat`): what their connection holds under its own encounter id.
In a seat each NPC keeps an encounter of its own with that player (its agent, its actions
bound to that player, its offers, its transactions, its byte-stable prefix), so whatever one
player is offered or pays stays theirs. The scene routes a player's line to the NPC it is for,
names the speaker of every frame that speaks (`speakerId`), and tells each NPC's encounter what
was said that it did not hear in it (`npc.heard`, its logged dynamic context).

The floor is one per scene, across players. Turn-taking, per player line:

1. the NPC the say names in `to`, else the NPCs its text names (in the order named), else the
   NPC who spoke last (at first, the `npcId` of the open) answers, in its encounter with the
   player who spoke; a picked option goes to the NPC whose options they were. Only this NPC
   may act on the line (decide, offer, commit an accepted offer): one player line never moves
   two NPCs' deals;
2. then, while fewer than `max_lines` NPC lines were spoken for this player line, the next NPC
   the player's text named answers it too, or else an NPC named in the line just spoken
   answers that line; both only speak (nothing is decided on them);
3. then the floor is free again: one `encounter.idle` for the whole round, to every player.

A say while any player's round runs gets `busy`. The NPCs' lines go to every player; `options`,
`action` and errors only to the player whose round it is; a player's own line reaches the
others as a `say.delta` whose `speakerId` is that player. In a shared scene every player is
told who is there (`scene.players`) whenever a player joins or leaves.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from ..encounter import Encounter, EncounterHost, SceneFrames
from ..frames import (
    EncounterIdle,
    EncounterOpen,
    EncounterOpened,
    EncounterSay,
    ErrorCode,
    ErrorFrame,
    Frame,
    FrameError,
    FrameProtocol,
    Options,
    SayDelta,
    SayEnd,
    SceneNpc,
    ScenePlayer,
)
from ..world import NpcCard
from .floor import Named, addressed

_log = logging.getLogger("starharness.npc.server")

HEARD_HEADING: Final = "Said in the scene since you last spoke:"
MAX_HEARD_LINES: Final = 12
"""What one NPC is told it heard, at most (the latest lines): a bound on its context."""
PLAYER: Final = "The player"
"""How an NPC's encounter names the player it is with; other players go by their names."""
YOU: Final = "You"
"""How an NPC's encounter with one player names that NPC's own line to another player."""

FrameSink = Callable[[Frame], None]


class SceneHost(EncounterHost, Protocol):
    """What a scene needs from the server: an encounter's host, and a place for its members."""

    def scene_member(self, encounter: Encounter, owner: object) -> None:
        """Count `encounter` among the server's open encounters, for `owner`'s connection."""
        ...


@dataclass(slots=True)
class _Member:
    """One NPC's encounter with one player of the scene."""

    card: NpcCard
    encounter: Encounter | None = None
    attitude: int = 0
    line: list[str] = field(default_factory=list[str])
    heard: deque[str] = field(default_factory=lambda: deque[str](maxlen=MAX_HEARD_LINES))


_Heard = list[tuple[_Member, str]]
"""Lines given to members to hear (taken back if the line is refused)."""


class SceneSeat:
    """One player's place in a scene; behaves towards its connection as one encounter does
    (`id`, `say`, `close`, `holds`)."""

    def __init__(
        self,
        scene: Scene,
        encounter_id: str,
        player_id: str,
        name: str,
        cards: Sequence[NpcCard],
        first: str,
        send: FrameSink,
    ) -> None:
        self.id = encounter_id
        self.player_id = player_id
        self.name = name
        self.first = first
        self.send = send
        self.frames = SceneFrames(encounter_id, scene.protocol, send)
        self.members = {card.id: _Member(card) for card in cards}
        self.greets = False
        self.ready = False
        """Sent its `encounter.opened`: frames of the scene may reach this player now."""
        self.options_from: str | None = None
        self.option_labels: dict[str, str] = {}
        self.closed = False
        self._scene = scene

    @property
    def scene(self) -> Scene:
        return self._scene

    @property
    def encounters(self) -> tuple[Encounter, ...]:
        """This player's encounters with the scene's NPCs, in the seat's order."""
        return tuple(m.encounter for m in self.members.values() if m.encounter is not None)

    def holds(self, encounter: Encounter) -> bool:
        """Whether `encounter` is one of this player's with the scene's NPCs."""
        member = self.members.get(encounter.npc.id)
        return member is not None and member.encounter is encounter

    async def say(self, frame: EncounterSay) -> None:
        """This player's line (`Scene.say`)."""
        await self._scene.say(self, frame)

    async def close(self) -> None:
        """This player leaves: only their encounters close (the last player's, the scene)."""
        await self._scene.leave(self)

    def opened(self) -> None:
        self.ready = True
        npcs = [
            SceneNpc(id=npc_id, name=m.card.name, attitude=m.attitude)
            for npc_id, m in self.members.items()
        ]
        self.frames.opened(next(npc for npc in npcs if npc.id == self.first), npcs)


class Scene:
    """An open scene of NPCs and the players seated in it, with one floor for all of them."""

    def __init__(
        self,
        cards: Sequence[NpcCard],
        protocol: FrameProtocol,
        max_lines: int,
        *,
        mood: str,
        shared: bool = False,
        on_empty: Callable[[Scene], None] | None = None,
    ) -> None:
        self.protocol = protocol
        self.shared = shared
        """Whether other players may join (the open said `join`)."""
        self._cards = {card.id: card for card in cards}
        self._named = [Named(card.id, card.name) for card in cards]
        self._mood = mood
        self._max_lines = max_lines
        self._on_empty = on_empty
        self._seats: dict[str, SceneSeat] = {}
        self._closed = False
        self._busy = False
        self._round: SceneSeat | None = None
        """The seat whose round runs (its player spoke, or was greeted)."""
        self._speaking: str | None = None
        """The NPC whose turn runs now (its `encounter.idle` ends it)."""
        self._floor = cards[0].id
        """Who answers a line that names no one: the NPC who spoke last."""
        self._lines = 0
        self._queue: list[str] = []
        """NPCs the player's line also named, still to answer it."""
        self._player_text = ""
        self._addressed = cards[0].id
        """The NPC the round's player line was for first (the one that may act on it)."""
        self._last: tuple[str, str] | None = None
        """The round's latest NPC line: who said it, and what."""
        self._echo: Callable[[], None] | None = None
        """The round's player line, shown to the other players once the round is under way."""
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def seats(self) -> tuple[SceneSeat, ...]:
        """The players in the scene, in the order they came."""
        return tuple(self._seats.values())

    # -- seating -----------------------------------------------------------------------------

    async def seat(
        self,
        host: SceneHost,
        frame: EncounterOpen,
        cards: Sequence[NpcCard],
        name: str,
        send: FrameSink,
        owner: object,
    ) -> SceneSeat:
        """Seat `frame.player_id` with an encounter per NPC bound to them (the others before
        `frame.npc_id`, who greets the scene's first player only); raises FrameError
        (encounter_exists for a player already here), leaving nothing of this player open."""
        if self._closed:
            raise FrameError(ErrorCode.UNKNOWN_ENCOUNTER, "the scene is closed", frame.id)
        if frame.player_id in self._seats:
            held = self._seats[frame.player_id].id
            raise FrameError(
                ErrorCode.ENCOUNTER_EXISTS,
                f"player {frame.player_id!r} is already in this scene (as encounter {held!r})",
                frame.id,
            )
        first = frame.npc_id
        seat = SceneSeat(self, frame.id, frame.player_id, name, cards, first, send)
        seat.greets = not self._seats
        self._seats[seat.player_id] = seat
        if seat.greets:
            self._busy = True
            self._round = seat
            self._speaking = self._floor = first
            self._lines = 1
        order = [npc_id for npc_id in seat.members if npc_id != first] + [first]
        try:
            for npc_id in order:
                opening = EncounterOpen(id=frame.id, npc_id=npc_id, player_id=seat.player_id)
                encounter = await Encounter.open(
                    host, opening, self._sink(seat, npc_id), greet=seat.greets and npc_id == first
                )
                seat.members[npc_id].encounter = encounter
                host.scene_member(encounter, owner)
        except BaseException:
            await self.leave(seat)
            raise
        if not seat.greets:
            # A player joining an open scene is not greeted: the floor may be another's now.
            seat.opened()
            self._players_changed()
            if not self._busy:
                seat.frames.idle()
        return seat

    def _players_changed(self) -> None:
        """A player came in (sent their `encounter.opened`) or left: in a shared scene, every
        player gets who is there now. A seat still opening is neither told nor listed, so a
        join that fails was never seen."""
        if not self.shared:
            return
        present = [seat for seat in self.seats if seat.ready]
        players = [ScenePlayer(id=seat.player_id, name=seat.name) for seat in present]
        for seat in present:
            seat.frames.players(players)

    # -- frames from the NPCs' encounters ----------------------------------------------------

    def _sink(self, seat: SceneSeat, npc_id: str) -> FrameSink:
        return lambda frame: self._from(seat, npc_id, frame)

    def _from(self, seat: SceneSeat, npc_id: str, frame: Frame) -> None:
        member = seat.members[npc_id]
        ours = seat is self._round
        if isinstance(frame, EncounterOpened):
            member.attitude = frame.attitude
            if seat.greets and npc_id == seat.first:
                seat.opened()
                self._players_changed()
            return
        if isinstance(frame, EncounterIdle):
            if ours and npc_id == self._speaking:
                self._turn_over(npc_id)
            return
        if ours:
            self._show_player_line()
        if isinstance(frame, SayDelta | SayEnd):
            if isinstance(frame, SayDelta):
                member.line.append(frame.text)
            else:
                self._spoken(seat, npc_id, "".join(member.line).strip())
                member.line.clear()
            for other in self.seats:
                if other is not seat and other.ready:
                    other.frames.show(frame, npc_id)
        elif isinstance(frame, Options):
            seat.options_from = npc_id
            seat.option_labels = {item.id: item.label for item in frame.items}
        seat.send(SceneFrames.spoken_by(frame, npc_id))

    def _spoken(self, seat: SceneSeat, npc_id: str, text: str) -> None:
        if not text:
            return
        self._last = (npc_id, text)
        name = self._cards[npc_id].name
        for other in self.seats:
            for heard_by, member in other.members.items():
                if other is seat:
                    if heard_by != npc_id:
                        member.heard.append(f'{name}: "{text}"')
                elif heard_by == npc_id:
                    member.heard.append(f'{YOU}, to {seat.name}: "{text}"')
                else:
                    member.heard.append(f'{name}, to {seat.name}: "{text}"')

    def _hear_player(self, seat: SceneSeat, targets: Sequence[str], words: str) -> _Heard:
        """The player's line, heard by every NPC's encounter it was not said in."""
        names = " and ".join(self._cards[npc_id].name for npc_id in targets)
        given: _Heard = []
        for other in self.seats:
            speaker = PLAYER if other is seat else seat.name
            line = f'{speaker}, to {names}: "{words}"'
            for npc_id, member in other.members.items():
                if other is seat and npc_id in targets:
                    continue
                member.heard.append(line)
                given.append((member, line))
        return given

    @staticmethod
    def _unhear(given: _Heard) -> None:
        for member, line in given:
            if member.heard and member.heard[-1] == line:
                member.heard.pop()

    def _show_player_line(self) -> None:
        echo, self._echo = self._echo, None
        if echo is not None:
            echo()

    def _turn_over(self, npc_id: str) -> None:
        """`npc_id`'s turn ended: the next NPC answers, or the floor is free again."""
        self._floor = npc_id
        after = self._next(npc_id) if self._lines < self._max_lines and not self._closed else None
        if after is None:
            self._round_over()
            return
        next_id, answer_to = after
        self._lines += 1
        self._speaking = next_id
        task = asyncio.get_running_loop().create_task(
            self._continue(next_id, answer_to), name=f"scene: {next_id} answers"
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _next(self, npc_id: str) -> tuple[str, str | None] | None:
        """Who speaks next and the NPC line they answer (None: the player's line), if anyone."""
        while self._queue:
            queued = self._queue.pop(0)
            if self._available(queued):
                return queued, None
        last = self._last
        if last is None or last[0] != npc_id:
            return None
        for named in addressed(last[1], self._named, speaker=npc_id):
            if self._available(named):
                return named, last[1]
        return None

    def _available(self, npc_id: str) -> bool:
        seat = self._round
        if seat is None or seat.closed:
            return False
        encounter = seat.members[npc_id].encounter
        return encounter is not None and not encounter.closed and not encounter.running

    def _round_over(self) -> None:
        self._show_player_line()
        self._busy = False
        self._round = None
        self._speaking = None
        self._queue = []
        self._last = None
        for seat in self.seats:
            if seat.ready:
                seat.frames.idle()

    async def _continue(self, npc_id: str, answer_to: str | None) -> None:
        seat = self._round
        assert seat is not None
        member = seat.members[npc_id]
        encounter = member.encounter
        assert encounter is not None
        encounter.heard = self._take_heard(member)
        try:
            if answer_to is None:
                # Named too, after the first: it speaks to the line, it does not act on it.
                first = self._cards[self._addressed].name
                await encounter.answer(f'{PLAYER} says to you and {first}: "{self._player_text}"')
            else:
                speaker = self._cards[self._floor].name
                await encounter.answer(f'{speaker} says to you: "{answer_to}"')
        except FrameError as error:
            seat.send(ErrorFrame.from_error(error))
            self._round_over()
        except Exception:
            _log.exception("scene %s: %s could not answer", seat.id, npc_id)
            seat.send(
                ErrorFrame(id=seat.id, code=ErrorCode.INTERNAL, message="an NPC could not answer")
            )
            self._round_over()

    @staticmethod
    def _take_heard(member: _Member) -> str:
        if not member.heard:
            return ""
        lines = [HEARD_HEADING, *(f"- {line}" for line in member.heard)]
        member.heard.clear()
        return "\n".join(lines)

    # -- the players' lines ------------------------------------------------------------------

    async def say(self, seat: SceneSeat, frame: EncounterSay) -> None:
        """Route a player's line (see the module's rule); raises FrameError (busy, bad_option,
        unknown_npc, unknown_encounter)."""
        if self._closed or seat.closed:
            raise FrameError(ErrorCode.UNKNOWN_ENCOUNTER, "the encounter is closed", seat.id)
        if self._busy:
            raise FrameError(ErrorCode.BUSY, _busy_reason(self._round, seat), seat.id)
        targets = self._targets(seat, frame)
        target, queue = targets[0], targets[1:]
        member = seat.members[target]
        encounter = member.encounter
        if encounter is None or encounter.closed:
            raise FrameError(ErrorCode.UNKNOWN_ENCOUNTER, "the encounter is closed", seat.id)
        if frame.text is not None:
            words = frame.text
        else:
            assert frame.option_id is not None
            words = seat.option_labels.get(frame.option_id, "")
        self._busy = True
        self._round = seat
        self._speaking = target
        self._lines = 1
        self._queue = queue
        self._player_text = words
        self._addressed = target
        self._last = None
        self._echo = self._echo_to_others(seat, words)
        encounter.heard = self._take_heard(member)
        # Heard before the answer is, by those it was not for.
        given = self._hear_player(seat, targets, words)
        try:
            await encounter.say(frame)
        except BaseException:
            self._unhear(given)
            self._echo = None
            if self._speaking == target and self._busy and self._round is seat:
                self._busy = False
                self._round = None
                self._speaking = None
            raise

    def _echo_to_others(self, seat: SceneSeat, words: str) -> Callable[[], None] | None:
        if len(self._seats) < 2 or not words:
            return None

        def show() -> None:
            for other in self.seats:
                if other is not seat and other.ready:
                    other.frames.player_line(seat.player_id, seat.name, words, self._mood)

        return show

    def _targets(self, seat: SceneSeat, frame: EncounterSay) -> list[str]:
        if frame.option_id is not None:
            owner = seat.options_from
            if owner is None or frame.option_id not in seat.option_labels:
                offered = ", ".join(map(repr, seat.option_labels)) or "none"
                raise FrameError(
                    ErrorCode.BAD_OPTION,
                    f"option {frame.option_id!r} is not in the last options frame "
                    f"(offered: {offered})",
                    seat.id,
                )
            return [owner]
        if frame.to is not None:
            if frame.to not in self._cards:
                present = ", ".join(map(repr, self._cards))
                raise FrameError(
                    ErrorCode.UNKNOWN_NPC,
                    f"NPC {frame.to!r} is not in this scene (its NPCs: {present})",
                    seat.id,
                )
            return [frame.to]
        assert frame.text is not None
        return addressed(frame.text, self._named) or [self._floor]

    # -- leaving -----------------------------------------------------------------------------

    async def leave(self, seat: SceneSeat) -> None:
        """`seat`'s player leaves: their encounters close (a round of theirs stops, and the
        floor is free again); the last player's leaving closes the scene. Safe to call twice."""
        if seat.closed:
            return
        seat.closed = True
        if self._seats.get(seat.player_id) is seat:
            del self._seats[seat.player_id]
        ended_round = seat is self._round
        last = not self._seats
        if last:
            self._closed = True
        if ended_round or last:
            tasks = list(self._tasks)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        encounters = seat.encounters
        if encounters:
            await asyncio.gather(*(e.close() for e in encounters), return_exceptions=True)
        if ended_round and not last and self._round is seat:
            self._echo = None
            self._round_over()
        if seat.ready and not last:
            self._players_changed()
        if last and self._on_empty is not None:
            self._on_empty(self)

    async def close(self) -> None:
        """Every player leaves; safe to call twice."""
        for seat in self.seats:
            await self.leave(seat)
        self._closed = True


def _busy_reason(running: SceneSeat | None, asking: SceneSeat) -> str:
    if running is None or running is asking:
        return "a turn is running; wait for encounter.idle"
    return f"{running.name} has the floor; wait for encounter.idle"
