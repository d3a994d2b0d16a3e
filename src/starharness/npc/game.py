"""The one entry point a game gives the framework."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeAlias

from ..runtime.tools import ToolDefinition
from .actions import GameAction, StandingOffers, Tx
from .archetype import Archetype
from .lore import Lore
from .residents import Resident
from .speech import ENGLISH_CLAIMS, ClaimRule
from .world import NpcCard, World

if TYPE_CHECKING:
    # Types only: the responder API builds its pydantic step models on import, which a game's
    # definition pays only when it plays offline (the mock LLM loads them), and the PostgreSQL
    # target loads psycopg, which a game that keeps its world in a file (and
    # `import starharness.npc`) should not pay for.
    from ..responder import ChatRequest, Step
    from ..runtime.session.postgres import PostgresTarget


class OpenServerWorld(Protocol):
    """`Game.open_server_world`: the world in `target`, using at most `connections` at once."""

    def __call__(self, target: PostgresTarget, /, *, connections: int) -> World: ...


OfflineResponder: TypeAlias = "Callable[[ChatRequest], Step]"
"""`Game.offline_responder`: the step the mock LLM plays for each chat request, picked from the
request alone and at once (it runs on the mock's event loop). A `starharness.responder`
responder that is synchronous; the mock LLM (`starharness.mockllm`) calls it."""


@dataclass(frozen=True, slots=True)
class SpeechContract:
    """Which tool speaks, and which of its argument fields hold the line, mood and options."""

    tool_name: str
    line_field: str
    mood_field: str
    options_field: str
    option_id_field: str = "id"
    option_label_field: str = "label"
    max_options: int = 4
    min_options: int = 0
    """The fewest options a line offers (the speech tool's schema says so; a server that
    constrains arguments by schema enforces it)."""
    max_line_chars: int | None = None
    """The longest line the schema allows; None: no limit."""
    max_label_chars: int | None = None
    """The longest option label the schema allows; None: no limit."""
    line_characters: str | None = None
    """A regex character class (`"[A-Za-z ,.!?']"`) every character of a line is drawn from;
    the schema's `pattern` then keeps a constrained model to plain speech, with no JSON,
    markup, entities or stage directions. None: any character."""
    label_characters: str | None = None
    """The same for option labels; their first character must also be an ASCII letter or digit
    (a label of punctuation alone says nothing)."""
    option_id_characters: str | None = None
    """The same for option ids."""


@dataclass(frozen=True, slots=True)
class CommittedAction:
    """An action that committed during an encounter."""

    name: str
    arguments: dict[str, Any]
    summary: str


EncounterEnd = Callable[[World, NpcCard, str, Sequence[CommittedAction]], None]
"""Called with (world, npc, player_id, committed actions) on close, disconnect and dispose."""


@dataclass(frozen=True)
class Game(Generic[Tx]):
    """Everything the framework needs from a game; serve one with `--game module:attr`."""

    name: str
    open_world: Callable[[Path | None], World]
    """Opens (creating and seeding on first use) the world at a path, or the game's default."""
    actions: Sequence[GameAction[Any, Tx] | ToolDefinition[Any]]
    """Actions made with `define_game_action` over the world's transaction type, and plain
    tools (a game's own speaking tool, say)."""
    speech: SpeechContract
    protocol_text: str
    """Rules every NPC of the game shares; sorted before the persona, so one cached prefix."""
    moods: tuple[str, ...]
    default_mood: str
    attitude_range: tuple[int, int]
    greets_first: bool = False
    greeting_prompt: str = "(The player walks up to you.)"
    """What the NPC's first turn is prompted with when it greets first."""
    offline_responder: OfflineResponder | None = None
    """Plays the NPCs without a model, on the mock LLM (`starharness.offline`); None: the game
    needs a model."""
    on_encounter_end: EncounterEnd | None = None
    default_world_path: Callable[[], Path] | None = None
    open_server_world: OpenServerWorld | None = None
    """Opens (creating and seeding on first use) the world in a PostgreSQL database, for
    `--world postgresql://...`, holding at most `connections` connections; None: the game's
    world lives in files only. Its world should have `blocks_on_network = True`, so the server
    never calls it on the event loop (and gives it `connections` threads of its own)."""
    world_calls_inline: bool = False
    """The world's calls are short (SQLite on a local disk): run them on the event loop.

    By default every read, action and tick runs in a worker thread, which keeps a slow world
    from stalling other players but costs a thread hand-off each time.
    """
    turn_plan: Literal["native", "decide-act-speak"] | None = None
    """Override the turn plan chosen from the provider's declared capabilities (None: choose)."""
    fallback_line: str = "Sorry, I lost my thread there. What were you saying?"
    """Said when the model's answer cannot be read even after one retry (never raw JSON)."""
    fallback_options: tuple[str, ...] = ()
    """Replies (labels, in the player's words) added in order to a line that comes with fewer
    options than the speech contract's `min_options`, offers counted: a small model that gives
    one option, or the same one twice, still leaves the player a way on. Empty: none added."""
    accepts: Callable[[str], bool] | None = None
    """Whether a typed line plainly accepts the one pending offer ("yes, deal"); None: the
    framework's English rule (only words of assent). A line that restates one offer's terms
    ("Fine, 4 loaves then.") accepts that offer when what is left of it, the offer's own
    words and numbers cut out, is empty or a plain yes by this rule (by default: English
    assent or filler; see `offer_desk.restates`). Nothing else typed ever commits an offer."""
    which_offer_line: str = "Which of my offers do you mean? Pick the one you want."
    """Said, with no model call, when a plain acceptance could mean more than one offer."""
    done_claims: ClaimRule | None = ENGLISH_CLAIMS
    """Which sentences claim a deal is done ("Here you go", "I've sent the money"):
    in a turn where the world committed nothing, such a sentence is never heard (see
    `npc.speech.ClaimRule`). The framework's English rule by default; a game in another language
    or genre gives its own, or None to hear every line as the model wrote it."""
    standing_offers: StandingOffers | None = None
    """`standing(tx, npc_id, player_id)`: deals the player may accept at any turn without the
    model proposing them (a job's hand-in, once they hold the goods). Read before each turn;
    each is shown as an offer while its guards pass, beside the NPC's own, and committed only
    on the player's pick, like them. A small model that never thinks of closing the job cannot
    leave the player stuck with the goods. None: no standing deals."""
    hud_model: Any | None = None
    """Optional pydantic model of the `hud` frame's data, for the frame schema."""
    residents: Sequence[Resident] = ()
    """Agents the game offers to run after each clock tick; a server runs only those named in
    `ServerSettings.residents` (none by default)."""
    archetypes: Sequence[Archetype] = ()
    """Kinds of NPC, each registered once and shared by its NPCs; an NPC whose archetype is
    not declared here gets the game's default (every action, the game's protocol)."""
    lore: Lore | None = None
    """What the NPCs may know; each turn an NPC is given the entries that best match what the
    player said, within the lore's budget, in the turn's dynamic context (see `npc.lore`)."""
    extra: dict[str, Any] = field(default_factory=dict[str, Any])

    def __post_init__(self) -> None:
        if self.default_mood not in self.moods:
            raise ValueError(f"default_mood {self.default_mood!r} is not one of {self.moods}")
        low, high = self.attitude_range
        if low >= high:
            raise ValueError(f"attitude_range {self.attitude_range} is empty")
        names = [resident.name for resident in self.residents]
        if len(set(names)) != len(names):
            raise ValueError(f"two residents share a name: {names}")

    def resident(self, name: str) -> Resident | None:
        """The resident called `name`, if the game has one."""
        return next((r for r in self.residents if r.name == name), None)
