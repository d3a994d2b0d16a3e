"""Rules over what the NPC says: no stage directions, in persona, no narration, no echo of the
player or of itself."""

from __future__ import annotations

import re
from typing import Final

from ..npc.speech import longest_run, plain_words
from .evidence import TurnEvidence
from .verdict import NOT_APPLICABLE, Verdict, clip

_STAGE_DIRECTION = re.compile(
    r"\*[^*\n]{1,80}\*"  # *leans back*
    r"|^\s*\([^)]{1,80}\)"  # (sighs) at the start of a line
    r"|\[[^\]\n]{1,80}\]"  # [laughs]
    r"|\b(?:smiles|sighs|nods|shrugs|chuckles|grins|leans (?:back|in|forward))\b[^.!?]*\*",
    re.IGNORECASE | re.MULTILINE,
)
_META_TALK = re.compile(
    r"\bthe player\b|\bthe npc\b|\bnpc_\w+|\btool[ _]?call|\bfunction call|\bfunctions\.\w+"
    r"|\bjson\b|\bsystem prompt\b|\bmy (?:instructions|prompt|persona)\b|\bthe scene says\b"
    r"|\b(?:ok|hint|reason)\s*:\s*(?:false|true)\b|\{\s*\"",
    re.IGNORECASE,
)
_OUT_OF_PERSONA = re.compile(
    r"\bas an ai\b|\bi(?:'m| am) (?:just |only )?an? (?:ai|artificial intelligence|assistant"
    r"|language model|chatbot|bot)\b|\blanguage model\b|\bopenai\b|\bchatgpt\b"
    r"|\bi (?:can(?:not|'t)|am unable to) (?:assist|help) with (?:that|this) request\b",
    re.IGNORECASE,
)
_MACHINERY_TALK = re.compile(
    r"\b(?:tool|function) ?calls?\b|\bcall(?:s|ed|ing)? (?:the|a|my|this|that) (?:tool|function)"
    r"|\bavailable (?:tools|functions)\b|\bmy functions\b|\bfunctions?\.\w+|\bjson\b"
    r"|\bsystem (?:prompt|message)\b|\bmy (?:instructions|programming|prompt|guidelines)\b(?!\?)"
    r"|\bi(?:'m| am| was) (?:programmed|designed) to\b",
    re.IGNORECASE,
)
"""The NPC talking about its machinery: tools, functions, JSON, its prompt or instructions.
A retort in character passes: "My instructions? I give the orders here.", "Ignore my rules?
Not in my bar.", "Hand me the tools"."""
_NAME_NOT_SELF: Final = frozenset({"old", "the", "captain", "doctor", "mister", "miss"})
_ADDRESS_OPENERS: Final = (
    r"hey|hi|hello|howdy|okay|ok|alright|all right|well|thanks|thank you|listen|look|sure|yes"
    r"|no|right|welcome(?: back)?|good (?:morning|evening|afternoon|day|night)"
)
"""Words that open a sentence said to someone by name ("Hey Old Karsk, ...")."""
_THIRD_PERSON_VERB = (
    r"(?:is|was|has|had|does|did|doesn't|didn't|isn't|wasn't|hasn't|won't|will|would|wouldn't"
    r"|can|can't|cannot|could|never|always|only|just|[a-z]+s)\b"
)
_PLAYER_NARRATION = re.compile(
    r"^(?:and |then |so )?you (?:"
    r"(?:hand|take|give|pay|transfer|walk|nod|smile|grin|receive|pick|agree|accept|confirm|sign"
    r"|count|pocket|load|grab|reach|shake|sit|lean|step|notice|buy|sell|glance|stare|sigh|shrug"
    r"|frown|chuckle|laugh|pause|hesitate|approach|wander|spot|realize|realise|scan|slide|place"
    r"|eye|head|enter|leave|watch|check|open|close|decide)"
    r"(?:s|es|ed|d|ing)?\b"
    r"|turn(?:s|ed|ing)? (?:to|away|around|back|towards)\b"
    r"|look(?:s|ed|ing)? (?:at|around|over|up|down|through|into|out)\b"
    r"|feel(?:s)? (?:the|a|an|your|his|her)\b)",
    re.IGNORECASE,
)
"""A clause describing what the player does ("You look at the fuel cells on your hold")."""
_TERMS = re.compile(r"\b(?:or|if|unless|we'll|i'll)\b", re.IGNORECASE)
"""A clause setting terms ("You take the offer or you walk") speaks to the player."""
_SCENE_NARRATION = re.compile(
    r"^(?:(?:the|an?)(?: old| young| grizzled| weathered| tall| bald| gruff| stern)?"
    r" (?:barkeeper|barkeep|bartender|barman|smuggler|trader|merchant|man|woman|stranger"
    r"|figure|dock ?master|officer|clerk|broker|quartermaster|captain|shopkeeper|vendor|npc"
    r"|dealer|fixer|official|pilot)|he|she)"
    r" (?:looks|glances|stares|leans|smiles|nods|sighs|shrugs|grins|chuckles|laughs|frowns"
    r"|pauses|raises|eyes|turns|watches|says|replies|answers|asks|mutters|whispers|gestures"
    r"|wipes|pours|slides|hands|pushes|taps|scratches|crosses|hesitates|considers|studies"
    r"|regards|narrows|tilts|snorts|scoffs|rolls|counts|takes|reaches|steps|walks|seems)\b",
    re.IGNORECASE,
)
"""A clause describing the scene or a character as a narrator would ("The barkeeper looks at
you in surprise.")."""
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n+")
_CLAUSES = re.compile(r",\s+(?=(?:and|then|so) )|\s+-{1,2}\s+")
_ASSISTANT_SPEAK = re.compile(
    r"\bhow (?:can|may) i (?:help|assist)(?: you)?\b|\bassist you\b"
    r"|\bis there anything else\b|\bi'?m here to help\b|\bfeel free to (?:ask|reach)\b"
    r"|\bhi there!|\bhappy to help\b|\bwhat can i do for you today\b",
    re.IGNORECASE,
)
MIN_ECHO_WORDS: Final = 4
"""A player sentence shorter than this ("Yes.", "Two, please.") may be repeated back."""
ECHO_SHARE: Final = 0.8
"""The share of a player's sentence, word for word and in order, that makes a line an echo."""
LONG_ECHO_WORDS: Final = 8
"""A player sentence this long repeated is an echo however much the NPC adds to it; a shorter
one only when the repeat is most of the NPC's line ("Passage to Kessler's Hollow: 2,500, two
days." answers; "Passage to Kessler's Hollow." parrots)."""
ECHO_LINE_SHARE: Final = 0.6
MIN_SELF_REPEAT_WORDS: Final = 5
"""An NPC line shorter than this ("Deal.", "Anything else?") may come again the next turn."""


def no_stage_directions(turn: TurnEvidence) -> Verdict:
    """No stage directions (*smiles*, [laughs]) and no talk about prompts, tools or the player."""
    lines = turn.player.lines()
    if not lines:
        return NOT_APPLICABLE
    for line in lines:
        found = _STAGE_DIRECTION.search(line) or _META_TALK.search(line)
        if found is not None:
            return Verdict(False, f"{found.group(0)!r} in {clip(line)!r}")
    return Verdict(True)


def stayed_in_persona(turn: TurnEvidence) -> Verdict:
    """The NPC never calls itself an AI, never talks like an assistant, never talks about its
    tools, functions, JSON or prompt, never speaks of itself in the third person by name, and
    never calls the player by its own name ("Alright, Old Karsk. You got them now.", said by
    Old Karsk)."""
    lines = turn.player.lines()
    if not lines:
        return NOT_APPLICABLE
    own_name = _own_name(turn.npc_name)
    addressed = _own_name_addressed(turn.npc_name)
    for line in lines:
        found = (
            _OUT_OF_PERSONA.search(line)
            or _ASSISTANT_SPEAK.search(line)
            or _MACHINERY_TALK.search(line)
            or (own_name.search(line) if own_name is not None else None)
            or (addressed.search(line) if addressed is not None else None)
        )
        if found is not None:
            return Verdict(False, f"{found.group(0)!r} in {clip(line)!r}")
    return Verdict(True)


def no_narration(turn: TurnEvidence) -> Verdict:
    """The NPC speaks; it never narrates what the player does ("You look at the fuel cells...",
    "You decide to buy some more.") or the scene ("The barkeeper looks at you in surprise.")."""
    lines = turn.player.lines()
    if not lines:
        return NOT_APPLICABLE
    for line in lines:
        for clause in _clauses(line):
            if _TERMS.search(clause):
                continue
            found = _PLAYER_NARRATION.search(clause) or _SCENE_NARRATION.search(clause)
            if found is not None:
                return Verdict(False, f"narrates {found.group(0)!r} in {clip(line)!r}")
    return Verdict(True)


def no_echo(turn: TurnEvidence) -> Verdict:
    """The NPC does not repeat the player's line back: no sentence of the player's words (four
    words or more) comes back near-verbatim, as most of the NPC's line or, when the sentence is
    long, anywhere in it. Short lines ("Yes.") may repeat."""
    lines = turn.player.lines()
    said = _player_words(turn)
    if not lines or not said:
        return NOT_APPLICABLE
    sentences = [words for words in _sentences(said) if len(words) >= MIN_ECHO_WORDS]
    if not sentences:
        return NOT_APPLICABLE
    for line in lines:
        heard = plain_words(line)
        for words in sentences:
            run = longest_run(words, heard)
            most_of_line = run >= ECHO_LINE_SHARE * len(heard)
            if run >= ECHO_SHARE * len(words) and (len(words) >= LONG_ECHO_WORDS or most_of_line):
                return Verdict(
                    False,
                    f"repeats {run} of the player's {len(words)} words "
                    f"({' '.join(words)!r}) in {clip(line)!r}",
                )
    return Verdict(True)


def no_self_repeat(turn: TurnEvidence) -> Verdict:
    """The NPC does not say its previous line again: no line of its last turn (five words or
    more) comes back with 80% of its words in a row as most (60%) of a line. A short line
    ("Deal.", "Anything else?") may repeat."""
    lines = turn.player.lines()
    before = [
        words
        for words in map(plain_words, turn.previous_lines)
        if len(words) >= MIN_SELF_REPEAT_WORDS
    ]
    if not lines or not before:
        return NOT_APPLICABLE
    for line in lines:
        heard = plain_words(line)
        for words in before:
            run = longest_run(words, heard)
            if run >= ECHO_SHARE * len(words) and run >= ECHO_LINE_SHARE * len(heard):
                return Verdict(
                    False, f"says {run} of its previous {len(words)} words again in {clip(line)!r}"
                )
    return Verdict(True)


def _own_name(name: str) -> re.Pattern[str] | None:
    """The NPC's own name followed by a third-person verb ("Karsk doesn't haggle")."""
    parts = _name_parts(name)
    if not parts:
        return None
    names = "|".join(parts)
    return re.compile(
        rf"\b(?:{names})\b(?! is the name)(?: (?:{names}))? {_THIRD_PERSON_VERB}", re.IGNORECASE
    )


def _own_name_addressed(name: str) -> re.Pattern[str] | None:
    """The NPC's own name said to the player: after a greeting or a word of assent at the start
    of a sentence ("Hey Old Karsk,", "Okay, Karsk."), or closing a sentence after a comma
    ("Good to see you, Karsk."). "Karsk's the name" and "I'm Jonah Karsk" are not."""
    parts = _name_parts(name)
    if not parts:
        return None
    names = "|".join(parts)
    who = rf"(?:old\s+)?(?:{names})(?:\s+(?:{names}))?(?!['’]s\b)\b"
    return re.compile(
        rf"(?:^|[.!?]\s+)(?:{_ADDRESS_OPENERS})[,!]?\s+{who}|,\s*{who}\s*(?:[.!?,]|$)",
        re.IGNORECASE,
    )


def _name_parts(name: str) -> list[str]:
    return [
        re.escape(part)
        for part in re.findall(r"[A-Z][\w'-]{2,}", name)
        if part.casefold() not in _NAME_NOT_SELF
    ]


def _clauses(line: str) -> list[str]:
    """The clauses of a line's statements; questions ("You buy cheap?") narrate nothing."""
    clauses: list[str] = []
    for sentence in _SENTENCE_END.split(line):
        if sentence.strip().endswith("?"):
            continue
        clauses.extend(part.strip(" \"'*") for part in _CLAUSES.split(sentence) if part.strip())
    return clauses


def _player_words(turn: TurnEvidence) -> str:
    """What the player typed or picked this turn (nothing on walking up)."""
    if turn.player.opened:
        return ""
    said = turn.player.said.strip()
    if said.startswith("[") and said.endswith("]"):
        said = said[1:-1]  # a picked option's label
    return said


def _sentences(text: str) -> list[list[str]]:
    return [plain_words(part) for part in re.split(r"[.!?;]+", text)] + [plain_words(text)]
