"""The NPC framework: world protocols, game actions, encounters, the frame protocol and server.

It knows no game: a game gives it a `Game` (a world, actions, a speech contract, personas).
"""

from .actions import (
    ENCOUNTER,
    ActionAttempt,
    ActionDefinitionError,
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
from .game import CommittedAction, EncounterEnd, Game, OpenServerWorld, SpeechContract
from .game_loading import GameLoadError, load_game
from .inspect import TranscriptInfo, find_transcript, list_transcripts, render_transcript
from .plugin import NPC_SERVER, NpcServerConfig, NpcServerPlugin
from .residents import Resident, ResidentDefinitionError, ResidentTurn
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
from .world import (
    ActionHost,
    AuditRecord,
    GameWorld,
    Meeting,
    NewsItem,
    NpcCard,
    ReadsMeetings,
    ReadsTogether,
    World,
    calls_inline,
    reading_together,
    waits_on_network,
)
from .world_calls import WorldCalls
from .world_place import open_game_world

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
    "Meeting",
    "NewsItem",
    "NpcCard",
    "NpcServer",
    "NpcServerConfig",
    "NpcServerPlugin",
    "OfferTerms",
    "OpenServerWorld",
    "ReadsMeetings",
    "ReadsTogether",
    "Refusal",
    "Resident",
    "ResidentDefinitionError",
    "ResidentTurn",
    "Role",
    "RunningServer",
    "ServerSettings",
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
