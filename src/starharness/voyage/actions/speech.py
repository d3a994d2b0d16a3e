"""How Omega station's NPCs speak: the speech contract, the moods, and the speaking tool."""

from __future__ import annotations

from typing import Final, Literal, get_args

from starharness.npc import SpeechContract, define_speech_tool

from ..content import SPEECH_ACTION

Mood = Literal["neutral", "friendly", "pleased", "amused", "wary", "annoyed", "hostile"]
MOODS: Final[tuple[str, ...]] = get_args(Mood)
"""Every mood a line can carry; engines pick faces and voices by it."""
DEFAULT_MOOD: Final = "neutral"

MIN_OPTIONS: Final = 2
MAX_OPTIONS: Final = 4
MAX_LINE_CHARS: Final = 280
"""Two or three sentences: a small model forced into a long string rambles until cut off."""
MAX_LABEL_CHARS: Final = 48
# Plain English speech only: no quotes, braces, brackets, asterisks, ampersands or angle
# brackets, so a grammar-constrained model cannot say JSON, markup, entities or *stage
# directions*. Labels also lose hyphens and colons, the marks of ids (`quest-medgel`).
LINE_CHARACTERS: Final = "[A-Za-z0-9 ,.'!?;:-]"
LABEL_CHARACTERS: Final = "[A-Za-z0-9 ,.'!?]"
OPTION_ID_CHARACTERS: Final = "[a-z0-9]"

SPEECH: Final = SpeechContract(
    tool_name=SPEECH_ACTION,
    line_field="line",
    mood_field="mood",
    options_field="options",
    option_id_field="id",
    option_label_field="label",
    max_options=MAX_OPTIONS,
    min_options=MIN_OPTIONS,
    max_line_chars=MAX_LINE_CHARS,
    max_label_chars=MAX_LABEL_CHARS,
    line_characters=LINE_CHARACTERS,
    label_characters=LABEL_CHARACTERS,
    option_id_characters=OPTION_ID_CHARACTERS,
)
"""The line comes first, so the framework can stream it while the rest still arrives."""

SPEAK = define_speech_tool(
    SPEECH,
    MOODS,
    f"Say one line to the player (the only way they hear you), with a mood and {MIN_OPTIONS}-"
    f"{MAX_OPTIONS} short replies they may pick, each written as the player would say it "
    '("Two fuel cells, please."), never an id. Act first, then speak.',
)
