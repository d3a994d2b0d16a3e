"""The Omega station `Game`: what the NPC framework serves by default."""

from __future__ import annotations

from pathlib import Path

from starharness.npc import Game
from starharness.responder import ChatRequest, Step
from starharness.runtime.session.postgres import PostgresTarget

from .actions import ACTIONS, DEFAULT_MOOD, MOODS, SPEECH
from .actions.quests import hand_ins
from .archetypes import ARCHETYPES
from .brain import respond
from .content import ATTITUDE_RANGE, PROTOCOL_TEXT
from .content.lore import LORE
from .director import DIRECTOR, is_director_request, respond_director
from .hud import VoyageHud
from .memory_hooks import record_visit
from .paths import default_world_path
from .store import DEFAULT_POOL_SIZE, VoyageWorld, open_server_world, open_world

GAME_NAME = "omega-station"


def open_game_world(path: Path | None) -> VoyageWorld:
    """The world file at path (default: `default_world_path()`), created and seeded once."""
    return open_world(path)


def open_game_server_world(
    target: PostgresTarget, /, *, connections: int = DEFAULT_POOL_SIZE
) -> VoyageWorld:
    """The world in a PostgreSQL database (schema `voyage`), created and seeded once, with a
    pool of at most `connections` connections."""
    return open_server_world(target, pool_size=connections)


def play_offline(request: ChatRequest) -> Step:
    """The offline brain for every agent of the game: the director, or else an NPC."""
    return respond_director(request) if is_director_request(request) else respond(request)


GAME = Game(
    name=GAME_NAME,
    open_world=open_game_world,
    open_server_world=open_game_server_world,
    actions=ACTIONS,
    speech=SPEECH,
    protocol_text=PROTOCOL_TEXT,
    moods=MOODS,
    default_mood=DEFAULT_MOOD,
    attitude_range=ATTITUDE_RANGE,
    greets_first=True,
    # A small model's line with one option (or one twice) still leaves the player a way on.
    fallback_options=("What are you selling?", "I'll be going."),
    offline_responder=play_offline,
    on_encounter_end=record_visit,
    # A job's hand-in is on the table whenever the player holds its goods, whether or not the
    # model thinks of it (the 1.5B model did not, and the player was left holding the gel).
    standing_offers=hand_ins,
    default_world_path=default_world_path,
    hud_model=VoyageHud,
    # Off by default: `--resident director` (or `residents: [director]` in the server row).
    residents=(DIRECTOR,),
    archetypes=ARCHETYPES,
    lore=LORE,
    # SQLite on local disk: a scene read is under 1 ms, a five-day tick about 5 ms, both less
    # than handing them to a worker thread costs. A world on PostgreSQL says it blocks on the
    # network (`VoyageWorld.blocks_on_network`), and the server then uses threads anyway.
    world_calls_inline=True,
)
"""Serve it with `--game starharness.voyage:GAME` (the default)."""
