"""Lore through the real server: a player's question retrieves the matching entries, within
the budget, only those the NPC may know; they reach the model in the turn's dynamic context,
the session log holds them and `inspect` shows them.

Omega station served for real: the offline brain behind the mock LLM over HTTP, the runtime
with an SQLite session store, the NPC server and a WebSocket player.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sqlite3
from pathlib import Path

from lore_support import (
    Player,
    given_lore,
    inspect,
    logged_contexts,
    serving_lore,
    stored_session,
)

from starharness.npc import Lore
from starharness.npc.lore import LORE_HEADING, SearchesLore, lore_lines, query_for, render_lore
from starharness.voyage import GAME, open_world, seed_world
from starharness.voyage.content import DOCK_MASTER, OMEGA_STATION, PLAYER_ID, SMUGGLER
from starharness.voyage.content.lore import ENTRIES, FACTIONS, LORE

_BY_ID = {entry.id: entry for entry in ENTRIES}
_PIRATE_BAY = _BY_ID["kessler-hollow"].text
_LOWER_LOCKS = _BY_ID["smugglers-lower-locks"].text
_VEX_DEBT = _BY_ID["vex-debt"].text
_KARSK_PARTNER = _BY_ID["karsk-partner"].text


async def test_a_question_gets_its_lore_in_the_logged_context_and_inspect_shows_it(
    tmp_path: Path,
) -> None:
    async with serving_lore(tmp_path) as stack:
        async with Player(stack.running.ws_url, PLAYER_ID) as me:
            await me.meet("e1", SMUGGLER)
            session_id = stack.running.server.encounters[0].session_id
            await me.say("e1", "What's the story with Kessler's Hollow? Is it a pirate bay?")
            await me.close("e1")
        sent = [r.body for r in stack.mock.requests_for(session_id)]

    stored = await stored_session(stack.sessions, session_id)
    contexts = logged_contexts(stored)
    given = [lore_lines(text) for text in contexts]
    # The greeting had no player words, so no lore; the question's turn has the pirate bay.
    assert given[0] == [] and _PIRATE_BAY in given[-1], given
    # What was logged is what the model was sent, after the static prefix, never in it.
    last = sent[-1]["messages"]
    assert _PIRATE_BAY in json.dumps(last)
    assert all(_PIRATE_BAY not in m["content"] for m in last if m["role"] == "system")
    assert len({m["content"] for b in sent for m in b["messages"] if m["role"] == "system"}) == 1

    shown = await asyncio.to_thread(inspect, "e1", "--sessions", str(stack.sessions))
    assert shown.exit_code == 0, shown.output
    assert f"lore: {_PIRATE_BAY}" in shown.output.splitlines()


async def test_lore_already_given_in_the_encounter_is_not_sent_again(tmp_path: Path) -> None:
    async with serving_lore(tmp_path) as stack, Player(stack.running.ws_url, PLAYER_ID) as me:
        await me.meet("e1", SMUGGLER)
        session_id = stack.running.server.encounters[0].session_id
        await me.say("e1", "What's the story with Kessler's Hollow? Is it a pirate bay?")
        await me.say("e1", "A pirate bay, Kessler's Hollow? And who runs customs on Omega station?")
        await me.close("e1")
    stored = await stored_session(stack.sessions, session_id)
    given = [line for text in logged_contexts(stored) for line in lore_lines(text)]
    # Given once, on the first question; it is in the NPC's history from then on.
    assert given.count(_PIRATE_BAY) == 1, given


async def test_a_model_on_this_machine_gets_the_best_entry_alone(tmp_path: Path) -> None:
    # Every lore token is evaluated before a local model's first word: one entry a turn.
    question = "Kessler's Hollow: pirates, the ice shelves, who fights in the bay?"
    given: dict[bool, list[str]] = {}
    for local in (False, True):
        place = tmp_path / ("local" if local else "cloud")
        place.mkdir()
        async with (
            serving_lore(place, local=local) as stack,
            Player(stack.running.ws_url, PLAYER_ID) as me,
        ):
            await me.meet("e1", SMUGGLER)
            session_id = stack.running.server.encounters[0].session_id
            await me.say("e1", question)
            await me.close("e1")
        stored = await stored_session(stack.sessions, session_id)
        given[local] = given_lore(stored)
    assert len(given[False]) > 1, given
    assert given[True] == given[False][:1] and LORE.local_max_entries == 1, given


def _decides(body: dict[str, object]) -> bool:
    choice = body.get("tool_choice")
    return isinstance(choice, dict) and json.dumps(choice).find('"decide"') >= 0


async def test_a_local_model_reads_lore_only_after_deciding_to_only_talk(tmp_path: Path) -> None:
    # On this machine every lore token is waited for: not before the decision, and not on a
    # turn that acts (its result is what the NPC speaks about).
    acting = "I'll buy 2 fuel cells for my run to Kessler's Hollow."
    talking = "Tell me about Kessler's Hollow. A pirate bay?"
    async with (
        serving_lore(tmp_path, local=True) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await me.meet("e1", SMUGGLER)
        session_id = stack.running.server.encounters[0].session_id
        frames = await me.say("e1", acting)
        offers = [o for f in frames if f["t"] == "options" for o in f["items"] if "offer" in o]
        assert offers, frames
        answer = await me.say("e1", talking)
        await me.close("e1")
        sent = [r.body for r in stack.mock.requests_for(session_id)]
    # The offline brain behind the mock reads it there too, as a model would.
    assert _PIRATE_BAY in "".join(f["text"] for f in answer if f["t"] == "say.delta"), answer
    stored = await stored_session(stack.sessions, session_id)

    # Given once, on the talking turn: the acting turn's search found it and did not give it.
    assert given_lore(stored) == [_PIRATE_BAY], given_lore(stored)
    decisions = [body for body in sent if _decides(body)]
    assert len(decisions) >= 2 and all(_PIRATE_BAY not in json.dumps(d) for d in decisions)
    # The speech of the talking turn reads it after the player's words.
    last = [m["content"] for m in sent[-1]["messages"]]
    lore_at = next(i for i, text in enumerate(last) if _PIRATE_BAY in text)
    assert last.index(talking) < lore_at, last
    # The speech request is the decision's prompt and the lore: nothing before it moved.
    talk_decision = decisions[-1]["messages"]
    assert sent[-1]["messages"][: len(talk_decision)] == talk_decision
    shown = await asyncio.to_thread(inspect, "e1", "--sessions", str(stack.sessions))
    assert shown.exit_code == 0, shown.output
    assert shown.output.splitlines().count(f"lore: {_PIRATE_BAY}") == 1, shown.output


async def test_faction_and_npc_lore_reach_only_those_who_may_know_it(tmp_path: Path) -> None:
    question = "Which lower locks do the crews use on odd days, and how deep is Vex's debt?"
    given: dict[str, list[str]] = {}
    async with serving_lore(tmp_path) as stack:
        for npc_id in (SMUGGLER, DOCK_MASTER):
            async with Player(stack.running.ws_url, PLAYER_ID) as me:
                await me.meet("e1", npc_id)
                session_id = stack.running.server.encounters[0].session_id
                await me.say("e1", question)
                await me.close("e1")
            stored = await stored_session(stack.sessions, session_id)
            given[npc_id] = lore_lines(logged_contexts(stored)[-1])

    # Karsk is of the smugglers: he gets their secret; Vex's debt is Vex's alone.
    assert _LOWER_LOCKS in given[SMUGGLER] and _VEX_DEBT not in given[SMUGGLER], given
    # Brandt of the station authority gets neither, whatever the player asks.
    assert _LOWER_LOCKS not in given[DOCK_MASTER] and _VEX_DEBT not in given[DOCK_MASTER], given
    assert not any(_KARSK_PARTNER in lines for lines in given.values())


async def test_the_lore_given_stays_within_the_games_budget(tmp_path: Path) -> None:
    # A question touching many entries, and a budget in words (a game's own "tokens").
    question = "Tell me about Kessler's Hollow, the route, the navy patrols, spice and customs"
    single = max(len(render_lore((entry,)).split()) for entry in ENTRIES)
    lore = Lore(ENTRIES, factions=FACTIONS, budget=single + 10, max_entries=6, measure=_words)
    game = dataclasses.replace(GAME, lore=lore)
    async with (
        serving_lore(tmp_path, game=game) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        await me.meet("e1", SMUGGLER)
        session_id = stack.running.server.encounters[0].session_id
        await me.say("e1", question)
        await me.close("e1")
    stored = await stored_session(stack.sessions, session_id)
    context = logged_contexts(stored)[-1]
    lines = lore_lines(context)
    block = "\n".join([LORE_HEADING, *(f"- {line}" for line in lines)])
    assert lines and _words(block) <= lore.budget, block
    # More entries matched than fit: the budget, not max_entries, stopped it.
    assert len(lines) < lore.max_entries


def test_the_sample_game_declares_its_lore() -> None:
    assert GAME.lore is LORE and 15 <= len(LORE.entries) <= 30
    scopes = {entry.scope for entry in LORE.entries}
    assert scopes == {"everyone", "faction", "npc"}
    # Every NPC of the seed has a faction and something only it knows; no entry names a
    # character the seed does not have.
    npcs = {actor.id for actor in OMEGA_STATION.actors if actor.kind == "npc"}
    assert set(FACTIONS) == npcs
    assert {entry.npc for entry in LORE.entries if entry.npc is not None} == npcs


def _words(text: str) -> int:
    return len(text.split())


def test_the_world_file_holds_the_lore_and_every_open_keeps_it_current(tmp_path: Path) -> None:
    path = tmp_path / "world.db"
    open_world(path).close()
    with sqlite3.connect(path) as conn:
        # A world from before the game had lore (or with older lore) ...
        conn.execute("DROP TABLE lore_index")
        conn.execute("DROP TABLE lore_digest")
    # ... is given the current lore on its next open, and searches it in its own file.
    with open_world(path) as world:
        assert isinstance(world, SearchesLore)
        query = query_for(LORE, SMUGGLER, "a pirate bay")
        assert query is not None
        assert world.search_lore(query)[0].text == _PIRATE_BAY
    # `seed` rebuilds a world whose file holds the FTS5 index and its shadow tables.
    seed_world(path)
    with open_world(path) as world:
        assert query is not None and world.search_lore(query)[0].text == _PIRATE_BAY
