"""A scene: one player and several NPCs (1-4) in one encounter, under the client's id.

Each NPC keeps an encounter of its own (its agent, its actions bound to it, its offers, its
transactions, its byte-stable prefix); the scene routes the player's line to the NPC it is for,
names the speaker of every frame that speaks (`speakerId`), and tells each NPC what the others
said through its logged dynamic context (`npc.heard`). Turn-taking, per player line:

1. the NPC the say names in `to`, else the NPCs its text names (in the order named), else the
   NPC who spoke last (at first, the `npcId` of the open) answers; a picked option goes to the
   NPC whose options they were. Only this NPC may act on the line (decide, offer, commit an
   accepted offer): one player line never moves two NPCs' deals;
2. then, while fewer than `max_lines` NPC lines were spoken for this player line, the next NPC
   the player's text named answers it too, or else an NPC named in the line just spoken
   answers that line; both only speak (nothing is decided on them);
3. then the floor returns to the player: one `encounter.idle` for the whole round.
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
)
from ..world import NpcCard
from .floor import Named, addressed

_log = logging.getLogger("starharness.npc.server")

HEARD_HEADING: Final = "Said in the scene since you last spoke:"
MAX_HEARD_LINES: Final = 12
"""What one NPC is told it heard, at most (the latest lines): a bound on its context."""
PLAYER: Final = "The player"

FrameSink = Callable[[Frame], None]


class SceneHost(EncounterHost, Protocol):
    """What a scene needs from the server: an encounter's host, and a place for its members."""

    def scene_member(self, encounter: Encounter, owner: object) -> None:
        """Count `encounter` among the server's open encounters, for `owner`'s connection."""
        ...


@dataclass(slots=True)
class _Member:
    card: NpcCard
    encounter: Encounter | None = None
    attitude: int = 0
    line: list[str] = field(default_factory=list[str])
    heard: deque[str] = field(default_factory=lambda: deque[str](maxlen=MAX_HEARD_LINES))


class Scene:
    """An open scene; behaves towards its connection as one encounter does (`say`, `close`)."""

    def __init__(
        self,
        encounter_id: str,
        player_id: str,
        cards: Sequence[NpcCard],
        protocol: FrameProtocol,
        send: FrameSink,
        max_lines: int,
    ) -> None:
        self.id = encounter_id
        self.player_id = player_id
        self._members = {card.id: _Member(card) for card in cards}
        self._named = [Named(card.id, card.name) for card in cards]
        self._frames = SceneFrames(encounter_id, protocol, send)
        self._send = send
        self._max_lines = max_lines
        self._closed = False
        self._busy = False
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
        self._options_from: str | None = None
        self._option_labels: dict[str, str] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def members(self) -> tuple[Encounter, ...]:
        """The NPCs' open encounters, in the scene's order."""
        return tuple(m.encounter for m in self._members.values() if m.encounter is not None)

    @property
    def closed(self) -> bool:
        return self._closed

    def holds(self, encounter: Encounter) -> bool:
        """Whether `encounter` is one of this scene's NPCs'."""
        member = self._members.get(encounter.npc.id)
        return member is not None and member.encounter is encounter

    # -- opening -----------------------------------------------------------------------------

    async def open(self, host: SceneHost, first: str, owner: object) -> None:
        """Open every NPC's encounter (the others before `first`, who may greet); raises
        FrameError, closing what was opened."""
        self._busy = True
        self._speaking = self._floor = first
        self._lines = 1
        order = [npc_id for npc_id in self._members if npc_id != first] + [first]
        try:
            for npc_id in order:
                frame = EncounterOpen(id=self.id, npc_id=npc_id, player_id=self.player_id)
                encounter = await Encounter.open(
                    host, frame, self._sink(npc_id), greet=npc_id == first
                )
                self._members[npc_id].encounter = encounter
                host.scene_member(encounter, owner)
        except BaseException:
            await self.close()
            raise

    def _opened(self, first: str) -> None:
        npcs = [
            SceneNpc(id=npc_id, name=m.card.name, attitude=m.attitude)
            for npc_id, m in self._members.items()
        ]
        self._frames.opened(next(npc for npc in npcs if npc.id == first), npcs)

    # -- frames from the NPCs' encounters ----------------------------------------------------

    def _sink(self, npc_id: str) -> FrameSink:
        return lambda frame: self._from(npc_id, frame)

    def _from(self, npc_id: str, frame: Frame) -> None:
        member = self._members[npc_id]
        if isinstance(frame, EncounterOpened):
            member.attitude = frame.attitude
            if npc_id == self._speaking:
                self._opened(npc_id)
            return
        if isinstance(frame, EncounterIdle):
            if npc_id == self._speaking:
                self._turn_over(npc_id)
            return
        if isinstance(frame, SayDelta):
            member.line.append(frame.text)
        elif isinstance(frame, SayEnd):
            self._spoken(npc_id, "".join(member.line).strip())
            member.line.clear()
        elif isinstance(frame, Options):
            self._options_from = npc_id
            self._option_labels = {item.id: item.label for item in frame.items}
        self._send(self._frames.spoken_by(frame, npc_id))

    def _spoken(self, npc_id: str, text: str) -> None:
        if not text:
            return
        self._last = (npc_id, text)
        self._hear(f'{self._members[npc_id].card.name}: "{text}"', but=npc_id)

    def _hear(self, line: str, *, but: str | Sequence[str]) -> None:
        left_out = {but} if isinstance(but, str) else set(but)
        for npc_id, member in self._members.items():
            if npc_id not in left_out:
                member.heard.append(line)

    def _unhear(self, line: str) -> None:
        for member in self._members.values():
            if member.heard and member.heard[-1] == line:
                member.heard.pop()

    def _turn_over(self, npc_id: str) -> None:
        """`npc_id`'s turn ended: the next NPC answers, or the floor returns to the player."""
        self._floor = npc_id
        after = self._next(npc_id) if self._lines < self._max_lines and not self._closed else None
        if after is None:
            self._round_over()
            return
        next_id, answer_to = after
        self._lines += 1
        self._speaking = next_id
        task = asyncio.get_running_loop().create_task(
            self._continue(next_id, answer_to), name=f"scene {self.id}: {next_id} answers"
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
        encounter = self._members[npc_id].encounter
        return encounter is not None and not encounter.closed and not encounter.running

    def _round_over(self) -> None:
        self._busy = False
        self._speaking = None
        self._queue = []
        self._last = None
        if not self._closed:
            self._frames.idle()

    async def _continue(self, npc_id: str, answer_to: str | None) -> None:
        member = self._members[npc_id]
        encounter = member.encounter
        assert encounter is not None
        encounter.heard = self._take_heard(member)
        try:
            if answer_to is None:
                # Named too, after the first: it speaks to the line, it does not act on it.
                first = self._members[self._addressed].card.name
                await encounter.answer(f'{PLAYER} says to you and {first}: "{self._player_text}"')
            else:
                speaker = self._members[self._floor].card.name
                await encounter.answer(f'{speaker} says to you: "{answer_to}"')
        except FrameError as error:
            self._send(ErrorFrame.from_error(error))
            self._round_over()
        except Exception:
            _log.exception("scene %s: %s could not answer", self.id, npc_id)
            self._send(
                ErrorFrame(id=self.id, code=ErrorCode.INTERNAL, message="an NPC could not answer")
            )
            self._round_over()

    def _take_heard(self, member: _Member) -> str:
        if not member.heard:
            return ""
        lines = [HEARD_HEADING, *(f"- {line}" for line in member.heard)]
        member.heard.clear()
        return "\n".join(lines)

    # -- the player's lines ------------------------------------------------------------------

    async def say(self, frame: EncounterSay) -> None:
        """Route the player's line (see the module's rule); raises FrameError (busy, bad_option,
        unknown_npc, unknown_encounter)."""
        if self._closed:
            raise FrameError(ErrorCode.UNKNOWN_ENCOUNTER, "the encounter is closed", self.id)
        if self._busy:
            raise FrameError(ErrorCode.BUSY, "a turn is running; wait for encounter.idle", self.id)
        targets = self._targets(frame)
        target, queue = targets[0], targets[1:]
        member = self._members[target]
        encounter = member.encounter
        if encounter is None or encounter.closed:
            raise FrameError(ErrorCode.UNKNOWN_ENCOUNTER, "the encounter is closed", self.id)
        if frame.text is not None:
            words = frame.text
        else:
            assert frame.option_id is not None
            words = self._option_labels.get(frame.option_id, "")
        names = " and ".join(self._members[npc_id].card.name for npc_id in targets)
        heard = f'{PLAYER}, to {names}: "{words}"'
        self._busy = True
        self._speaking = target
        self._lines = 1
        self._queue = queue
        self._player_text = words
        self._addressed = target
        self._last = None
        encounter.heard = self._take_heard(member)
        # Heard before the answer is, by those it was not for.
        self._hear(heard, but=targets)
        try:
            await encounter.say(frame)
        except BaseException:
            self._unhear(heard)
            if self._speaking == target and self._busy:
                self._busy = False
                self._speaking = None
            raise

    def _targets(self, frame: EncounterSay) -> list[str]:
        if frame.option_id is not None:
            owner = self._options_from
            if owner is None or frame.option_id not in self._option_labels:
                offered = ", ".join(map(repr, self._option_labels)) or "none"
                raise FrameError(
                    ErrorCode.BAD_OPTION,
                    f"option {frame.option_id!r} is not in the last options frame "
                    f"(offered: {offered})",
                    self.id,
                )
            return [owner]
        if frame.to is not None:
            if frame.to not in self._members:
                present = ", ".join(map(repr, self._members))
                raise FrameError(
                    ErrorCode.UNKNOWN_NPC,
                    f"NPC {frame.to!r} is not in this scene (its NPCs: {present})",
                    self.id,
                )
            return [frame.to]
        assert frame.text is not None
        return addressed(frame.text, self._named) or [self._floor]

    # -- closing -----------------------------------------------------------------------------

    async def close(self) -> None:
        """Close every NPC's encounter and stop a pending answer; safe to call twice."""
        self._closed = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        members = self.members
        if members:
            await asyncio.gather(*(m.close() for m in members), return_exceptions=True)
