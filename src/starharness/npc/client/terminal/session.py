"""A terminal conversation over the frame protocol: input lines in, rendered frames out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

from rich.console import Console

from ...frames import MAX_SCENE_NPCS, FrameError
from ..connection import FrameConnection, connect
from ..errors import ConnectionLostError
from ..handlers import dispatch
from .commands import (
    HELP_TEXT,
    All,
    Close,
    Command,
    Help,
    Invalid,
    ListNpcs,
    Nothing,
    Pick,
    Quit,
    Say,
    SayTo,
    Tick,
    parse_command,
)
from .printer import Printer
from .render import accepted_words
from .state import Phase, TalkState
from .view import TalkView

EXIT_OK = 0
EXIT_FAILED = 1
LEAVE_OPTION_IDS = frozenset({"bye", "leave"})
"""Option ids that mean the player leaves (the protocol's convention, docs/protocol.md)."""
_PROMPT = "> "


@dataclass(frozen=True, slots=True)
class TalkSettings:
    """Where to connect, as whom, and whom to walk up to first."""

    url: str
    player_id: str
    npc_id: str | None = None
    token: str | None = None
    echo_input: bool = False
    """Print each input line after the prompt (for piped input, which the terminal never shows)."""


async def run_talk(settings: TalkSettings, lines: AsyncIterator[str], console: Console) -> int:
    """Talk until `/quit` or end of input (0), or until the session fails (1).

    Raises `ServerUnreachableError` (or `ClientError`) when the harness cannot be reached at all.
    """
    async with connect(settings.url, token=settings.token) as connection:
        return await _Talk(settings, connection, console).run(lines)


class _Talk:
    def __init__(
        self, settings: TalkSettings, connection: FrameConnection, console: Console
    ) -> None:
        self._settings = settings
        self._connection = connection
        self._out = Printer(console)
        self._state = TalkState(player_id=settings.player_id)
        self._view = TalkView(self._state, self._out)

    async def run(self, lines: AsyncIterator[str]) -> int:
        await self._connection.hello(self._settings.player_id)
        receiving = asyncio.create_task(self._receive(), name="talk-receive")
        typing = asyncio.create_task(self._type(lines), name="talk-type")
        try:
            done, _ = await asyncio.wait({receiving, typing}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (receiving, typing):
                task.cancel()
            # Outcomes are read below; here the tasks only have to be finished.
            await asyncio.gather(receiving, typing, return_exceptions=True)
        finished = typing if typing in done else receiving
        try:
            return finished.result()
        except ConnectionLostError as exc:
            self._out.line(f"connection lost: {exc}", "bold red")
            return EXIT_FAILED

    async def _receive(self) -> int:
        while True:
            try:
                frame = await self._connection.receive()
            except FrameError as exc:
                # A newer harness may send frames this client does not know; keep going.
                self._out.line(f"(ignored a frame this client cannot read: {exc.message})", "dim")
                continue
            dispatch(self._view, frame)
            if self._state.fatal is not None:
                self._out.line(self._state.fatal, "bold red")
                return EXIT_FAILED
            if self._state.fence_wanted:
                await self._fence(Phase.IDLE, ends_on_idle=True)

    async def _type(self, lines: AsyncIterator[str]) -> int:
        await self._state.ready.wait()
        await self._start()
        while True:
            await self._state.ready.wait()
            if not self._settings.echo_input:
                self._out.prompt(_PROMPT)
            line = await anext(lines, None)
            if line is None:
                break
            if self._settings.echo_input:
                self._out.line(f"{_PROMPT}{line}", "bold")
            else:
                self._out.input_taken()
            command = parse_command(line)
            if isinstance(command, Quit):
                break
            await self._act(command)
        await self._leave()
        return EXIT_OK

    async def _start(self) -> None:
        npc_id = self._settings.npc_id
        if npc_id is None:
            self._view.show_npcs()
        else:
            await self._open(npc_id)

    async def _act(self, command: Command) -> None:
        match command:
            case Say(text):
                await self._say(text)
            case SayTo(who, text):
                await self._say_to(who, text)
            case All():
                await self._open_all()
            case Pick(number, text):
                await self._pick(number, text)
            case Close():
                await self._close()
            case Tick(days):
                await self._connection.tick(days)
                # Wait until the harness has done the tick, or refused it, before reading on:
                # at the end of piped input the refusal would otherwise be lost.
                await self._fence(self._state.phase, ends_on_idle=False)
            case ListNpcs():
                self._view.show_npcs()
            case Help():
                self._out.line(HELP_TEXT, "dim")
            case Invalid(problem):
                self._out.line(problem, "yellow")
            case Nothing() | Quit():
                pass

    async def _fence(self, then: Phase, *, ends_on_idle: bool) -> None:
        fence_id = self._state.begin_fence(then, ends_on_idle=ends_on_idle)
        await self._connection.close_encounter(fence_id)

    async def _open(self, npc_id: str) -> None:
        state = self._state
        encounter_id = state.begin_encounter(state.npc_named(npc_id))
        await self._connection.open_encounter(encounter_id, npc_id, state.player_id)

    async def _open_all(self) -> None:
        state = self._state
        present = state.present()[:MAX_SCENE_NPCS]
        if len(present) < 2:
            self._out.line("There are not two people here to talk to at once.", "yellow")
            return
        if state.encounter_id is not None:
            await self._close()
        first = present[0]
        encounter_id = state.begin_encounter(" and ".join(npc.name for npc in present))
        ids = [npc.id for npc in present]
        # On a harness that shares scenes, other players here talking to them are in it too.
        await self._connection.open_encounter(
            encounter_id, first.id, state.player_id, ids, join=state.shares_scenes
        )

    async def _say(self, text: str, to: str | None = None) -> None:
        state = self._state
        if state.encounter_id is None:
            self._out.line("You are not talking to anyone: pick someone by number.", "yellow")
            return
        state.enter(Phase.TURN)
        await self._connection.say(state.encounter_id, text, to)

    async def _say_to(self, who: str, text: str) -> None:
        member = self._state.member_called(who)
        if member is None:
            names = ", ".join(m.name for m in self._state.members)
            where = f" (here: {names})" if names else " (use /all to talk to everyone here)"
            self._out.line(f"Nobody in this conversation answers to {who!r}{where}.", "yellow")
            return
        await self._say(text, member.id)

    async def _pick(self, number: int, text: str) -> None:
        state = self._state
        if state.encounter_id is None:
            present = state.present()
            if 1 <= number <= len(present):
                await self._open(present[number - 1].id)
            else:
                self._out.line(f"There is no one numbered {number} (see /npcs).", "yellow")
            return
        if not state.options:
            await self._say(text)
            return
        if not 1 <= number <= len(state.options):
            self._out.line(f"Pick an option from 1 to {len(state.options)}.", "yellow")
            return
        state.enter(Phase.TURN)
        option = state.options[number - 1]
        option_id = option.id
        if option.offer is not None:
            self._out.line(accepted_words(option.label, option.offer), "bold yellow")
        await self._connection.choose(state.encounter_id, option_id)
        if option_id in LEAVE_OPTION_IDS:
            # Leaving: hear the farewell, then walk away; no reply can keep the player there.
            await state.ready.wait()
            if state.phase is Phase.IDLE:  # not when the harness already ended it
                await self._close()

    async def _close(self) -> None:
        state = self._state
        if state.encounter_id is None:
            self._out.line("You are not talking to anyone.", "yellow")
            return
        await self._connection.close_encounter(state.encounter_id)
        self._out.line(f"You walk away from {state.npc_name}.", "dim")
        state.end_encounter()
        self._view.show_npcs()

    async def _leave(self) -> None:
        state = self._state
        if state.encounter_id is not None:
            await self._connection.close_encounter(state.encounter_id)
            self._out.line(f"You walk away from {state.npc_name}.", "dim")
            state.end_encounter()
        self._out.line("Bye.", "dim")
