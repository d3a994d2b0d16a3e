"""The NPC framework: world protocols, game actions, encounters, the frame protocol and server.

It knows no game: a game gives it a `Game` (a world, actions, a speech contract, personas).

Importing this package is light: what a game author writes with (actions, worlds, `Game`,
residents) loads at once, while the server and its plugin (uvicorn, Starlette, psycopg,
Prometheus, JWT) load on first use of one of their names, so a game's definition, its tests and
`star-harness --help` never pay for a web server. `starharness.npc.server` is the same server by
its own name.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .actions import (
    ENCOUNTER,
    ActionAttempt,
    ActionDefinitionError,
    CounterOffer,
    EncounterBinding,
    GameAction,
    Guard,
    OfferTerms,
    Refusal,
    Role,
    define_game_action,
    in_range,
    predicate,
)
from .archetype import Archetype
from .encounter import (
    TRANSCRIPT_KIND,
    Encounter,
    GameDefinitionError,
    GameKit,
    define_speech_tool,
)
from .game import (
    CommittedAction,
    EncounterEnd,
    Game,
    OfflineResponder,
    OpenServerWorld,
    SpeechContract,
)
from .game_loading import GameLoadError, load_game
from .inspect import TranscriptInfo, find_transcript, list_transcripts, render_transcript
from .lore import Lore, LoreEntry, LoreError, SearchesLore
from .residents import Resident, ResidentDefinitionError, ResidentTurn
from .world import (
    ActionHost,
    AuditRecord,
    GameWorld,
    Meeting,
    NewsItem,
    NpcCard,
    ReadsMeetings,
    ReadsTogether,
    SharesSceneOpening,
    World,
    calls_inline,
    reading_together,
    waits_on_network,
)
from .world_calls import WorldCalls

if TYPE_CHECKING:
    from .plugin import NPC_SERVER, NpcServerConfig, NpcServerPlugin
    from .server import (
        ExposureError,
        FanoutSettings,
        LimitsSettings,
        NpcServer,
        RunningServer,
        ServerSettings,
        TranscriptSettings,
        TurnSettings,
        build_app,
        serve_game,
        start_server,
    )
    from .world_place import open_game_world

# The names whose modules pull in the web stack or psycopg, and the submodule each lives in.
_LAZY: dict[str, str] = {
    "NPC_SERVER": ".plugin",
    "NpcServerConfig": ".plugin",
    "NpcServerPlugin": ".plugin",
    "ExposureError": ".server",
    "FanoutSettings": ".server",
    "LimitsSettings": ".server",
    "NpcServer": ".server",
    "RunningServer": ".server",
    "ServerSettings": ".server",
    "TranscriptSettings": ".server",
    "TurnSettings": ".server",
    "build_app": ".server",
    "serve_game": ".server",
    "start_server": ".server",
    "open_game_world": ".world_place",
}


def __getattr__(name: str) -> Any:
    """Load a server name on first use (PEP 562), then keep it as an ordinary attribute."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "ENCOUNTER",
    "NPC_SERVER",
    "TRANSCRIPT_KIND",
    "ActionAttempt",
    "ActionDefinitionError",
    "ActionHost",
    "Archetype",
    "AuditRecord",
    "CommittedAction",
    "CounterOffer",
    "Encounter",
    "EncounterBinding",
    "EncounterEnd",
    "ExposureError",
    "FanoutSettings",
    "Game",
    "GameAction",
    "GameDefinitionError",
    "GameKit",
    "GameLoadError",
    "GameWorld",
    "Guard",
    "LimitsSettings",
    "Lore",
    "LoreEntry",
    "LoreError",
    "Meeting",
    "NewsItem",
    "NpcCard",
    "NpcServer",
    "NpcServerConfig",
    "NpcServerPlugin",
    "OfferTerms",
    "OfflineResponder",
    "OpenServerWorld",
    "ReadsMeetings",
    "ReadsTogether",
    "Refusal",
    "Resident",
    "ResidentDefinitionError",
    "ResidentTurn",
    "Role",
    "RunningServer",
    "SearchesLore",
    "ServerSettings",
    "SharesSceneOpening",
    "SpeechContract",
    "TranscriptInfo",
    "TranscriptSettings",
    "TurnSettings",
    "World",
    "WorldCalls",
    "build_app",
    "calls_inline",
    "define_game_action",
    "define_speech_tool",
    "find_transcript",
    "in_range",
    "list_transcripts",
    "load_game",
    "open_game_world",
    "predicate",
    "reading_together",
    "render_transcript",
    "serve_game",
    "start_server",
    "waits_on_network",
]
