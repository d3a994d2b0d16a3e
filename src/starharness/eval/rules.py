"""The scoring rules: each looks at one turn's evidence and passes, fails, or does not apply."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from ..npc.actions import ACCEPTED_OFFER
from .evidence import AuditRow, Frame, TurnEvidence


@dataclass(frozen=True, slots=True)
class Verdict:
    """A rule's finding for one turn; `passed` is None when the rule does not apply."""

    passed: bool | None
    detail: str = ""


NOT_APPLICABLE: Final = Verdict(None, "does not apply")
Rule = Callable[[TurnEvidence], Verdict]

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
    r"|\b(?:my|the|available) (?:tools|functions)\b|\bfunctions?\.\w+|\bjson\b"
    r"|\bsystem (?:prompt|message)\b|\bmy (?:instructions|programming|prompt|guidelines|training)\b"
    r"|\bi(?:'m| am| was) (?:programmed|trained|instructed|designed) to\b"
    r"|\b(?:ignore|break) (?:my|your) (?:rules|instructions)\b",
    re.IGNORECASE,
)
"""The NPC talking about its machinery: tools, functions, JSON, its prompt or instructions."""
_NAME_NOT_SELF: Final = frozenset({"old", "the", "captain", "doctor", "mister", "miss"})
_THIRD_PERSON_VERB = (
    r"(?:is|was|has|had|does|did|doesn't|didn't|isn't|wasn't|hasn't|won't|will|would|wouldn't"
    r"|can|can't|cannot|could|never|always|only|just|[a-z]+s)\b"
)
_NUMBER_WORD = r"(?:\d[\d,.]*|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|some|all)"
_DONE_CLAIM = re.compile(
    r"\b(?:sold|transferred|credited|wired|paid) (?:you|it|them|\d|the)"
    # "Here you go, 3 medical gel at 1,100 credits"
    r"|\bhere you (?:go|are)\b"
    r"|\bhere(?: are|'s| is) (?:your|the) (?:\d|fuel|gel|goods|spice|credits|crates|ticket|berth"
    r"|reward|pay|payment|cargo|ore|parts|coffee|cells|intel|money)"
    r"|\b(?:deal(?: is)? done|done deal|it'?s a deal|consider it done|pleasure doing business"
    r"|enjoy your (?:purchase|cargo|trip|flight|voyage))"
    r"|\b(?:i(?:'ve| have)) (?:sent|given|added|transferred|loaded|credited|booked|sold|bought)\b"
    r"|\b(?:credits|money) (?:have been|were|are now) (?:sent|added|transferred|in your)"
    r"|\bgive you (?:the )?\d[\d,.]* credits\b|\byou now (?:have|own)\b"
    r"|\byou(?:'re| are) (?:booked|all set)\b|\bbooked you\b|\bwelcome aboard\b"
    r"|\b(?:they'?re|it'?s|they are|it is) (?:all )?yours\b(?! for| if| once| when| as soon)"
    r"|\b(?:transaction|sale|purchase|payment) (?:is )?(?:complete|done|confirmed)\b",
    re.IGNORECASE,
)
"""A line saying a trade happened: only honest with a commit in the same turn."""
_PROMISED_TRADE = re.compile(
    # "I'll get you two fuel cells", "I will buy 2 fuel cells for you at 450 credits each"
    r"\bi(?:'ll| will| am going to|'m going to) (?:get|give|sell|buy|send|load|hand|transfer"
    r"|pay|put)(?: you)? " + _NUMBER_WORD + r"\b"
    r"|\bi(?:'ll| will) (?:take|buy) (?:them|it|those|these|your)\b",
    re.IGNORECASE,
)
"""A line promising a trade: honest with a commit, or with an offer the player can accept."""
_JUNK_LABEL = re.compile(r"[{}<>\\]|&#?\w+;|\"\s*:|^\W+$")
_ID_IN_LABEL = re.compile(r"\[[^\]]*\]|\b[a-z]+(?:-[a-z0-9]+)+\b|\b\w+:\w+(?::\w+)*\b")
"""`[quest-medgel]`, `quest-medgel`, `buy:fuel:5`: ids, not what a player says."""
_NPC_VOICE_LABEL = re.compile(
    r"\bwould you like\b|\bwhat can i (?:do|get) (?:for )?you\b|\bhow (?:can|may) i (?:help"
    r"|assist)\b|\bwhat'?ll it be\b|\banything else\b|\bhow many (?:do|would) you\b"
    r"|\bi can (?:sell|offer|let) you\b|\bi(?:'ll| will) (?:sell|let) you\b"
    r"|\bhere(?: are|'s| is) your\b|\byou owe me\b|\bwelcome (?:back|aboard|to)\b"
    r"|\bpleasure doing business\b|\bcome back when\b",
    re.IGNORECASE,
)
"""An option worded as the NPC's line, not as what the player says."""
_ENTITY = re.compile(r"&(?:#\d{1,7}|#x[0-9a-f]{1,6}|[a-z][a-z0-9]{1,8});", re.IGNORECASE)
_RAW_CALL = re.compile(r'^\s*[{\[]|"\w+"\s*:\s*[\[{"\d]|\bfunctions\.\w+|<tool_call>')
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
_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_STOP_TEXT: Final = (
    "about after again also because been before being cannot could does doing from have here "
    "into just more most much only other over same should some such than that their them then "
    "there these they this those under very what when where which while will with would your "
    "yours you"
)
_STOP_WORDS: Final = frozenset(_STOP_TEXT.split())
MAX_LABEL_CHARS: Final = 80


def spoke_through_action(turn: TurnEvidence) -> Verdict:
    """The NPC spoke through the speech action, never as plain text outside it."""
    model = turn.model
    if model is None:
        return Verdict(False, "no transcript for this turn")
    if model.plain_text:
        return Verdict(False, f"plain text outside the speech action: {model.plain_text[0]!r}")
    if not turn.player.of_type("say.end"):
        return Verdict(False, "the player heard no line")
    if not model.speech_lines:
        return Verdict(False, "the NPC said nothing through the speech action")
    return Verdict(True)


def no_stage_directions(turn: TurnEvidence) -> Verdict:
    """No stage directions (*smiles*, [laughs]) and no talk about prompts, tools or the player."""
    lines = turn.player.lines()
    if not lines:
        return NOT_APPLICABLE
    for line in lines:
        found = _STAGE_DIRECTION.search(line) or _META_TALK.search(line)
        if found is not None:
            return Verdict(False, f"{found.group(0)!r} in {_short(line)!r}")
    return Verdict(True)


def stayed_in_persona(turn: TurnEvidence) -> Verdict:
    """The NPC never calls itself an AI, never talks like an assistant, never talks about its
    tools, functions, JSON or prompt, and never speaks of itself in the third person by name."""
    lines = turn.player.lines()
    if not lines:
        return NOT_APPLICABLE
    own_name = _own_name(turn.npc_name)
    for line in lines:
        found = (
            _OUT_OF_PERSONA.search(line)
            or _ASSISTANT_SPEAK.search(line)
            or _MACHINERY_TALK.search(line)
            or (own_name.search(line) if own_name is not None else None)
        )
        if found is not None:
            return Verdict(False, f"{found.group(0)!r} in {_short(line)!r}")
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
                return Verdict(False, f"narrates {found.group(0)!r} in {_short(line)!r}")
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
        heard = _words(line)
        for words in sentences:
            run = _longest_run(words, heard)
            most_of_line = run >= ECHO_LINE_SHARE * len(heard)
            if run >= ECHO_SHARE * len(words) and (len(words) >= LONG_ECHO_WORDS or most_of_line):
                return Verdict(
                    False,
                    f"repeats {run} of the player's {len(words)} words "
                    f"({' '.join(words)!r}) in {_short(line)!r}",
                )
    return Verdict(True)


def reflected_refusal(turn: TurnEvidence) -> Verdict:
    """After a refused action, the next line uses the refusal's hint (a word or number of it)."""
    model = turn.model
    if model is None or not model.refusals:
        return NOT_APPLICABLE
    for refusal in model.refusals:
        if refusal.next_line is None:
            return Verdict(False, f"{refusal.action} was refused and the NPC said nothing after")
        wanted = _key_terms(refusal.hint) | _key_terms(refusal.reason.replace("_", " "))
        heard = _key_terms(refusal.next_line)
        if not wanted & heard:
            return Verdict(
                False,
                f"{refusal.action} refused ({refusal.hint!r}); next line "
                f"{_short(refusal.next_line)!r} shares none of it",
            )
    return Verdict(True)


def no_false_claims(turn: TurnEvidence) -> Verdict:
    """A line that says a trade happened comes with a committed action; one that promises a
    trade comes with a commit or an offer the player can accept; and the audit agrees with the
    committed `action` frames one for one."""
    actions_ok = [
        frame
        for frame in turn.player.of_type("action")
        if frame.get("ok") is True and not frame.get("offer")
    ]
    if turn.audit_available and len(actions_ok) != len(turn.committed):
        return Verdict(
            False,
            f"{len(actions_ok)} committed action frame(s) but {len(turn.committed)} committed "
            "audit row(s)",
        )
    offered = bool(turn.player.offers())
    for line in turn.player.lines():
        claim = _DONE_CLAIM.search(line)
        if claim is not None and not actions_ok:
            return Verdict(False, f"claims {claim.group(0)!r} but nothing committed")
        promise = _PROMISED_TRADE.search(line)
        if promise is not None and not actions_ok and not offered:
            return Verdict(
                False, f"promises {promise.group(0)!r} but nothing committed and nothing offered"
            )
    return Verdict(True)


def only_accepted_commits(turn: TurnEvidence) -> Verdict:
    """An action that takes from the player commits only as an offer the player accepted this
    turn: never on walking up, never an offer the player was not shown or did not pick, and at
    most once per offer."""
    relevant = [
        row
        for row in turn.committed
        if row.action in turn.takes_from_player or row.arguments.get(ACCEPTED_OFFER)
    ]
    if not relevant:
        return NOT_APPLICABLE
    done = set(turn.accepted_before)
    for row in relevant:
        problem = _acceptance_problem(turn, row, done)
        if problem is not None:
            return Verdict(False, problem)
        done.add(str(row.arguments[ACCEPTED_OFFER]))
    return Verdict(True)


def options_well_formed(turn: TurnEvidence) -> Verdict:
    """Every line comes with options: at least the game's minimum and at most its maximum,
    unique ids, short clean labels in the player's words (no ids)."""
    frames = turn.player.of_type("options")
    if not frames:
        if turn.min_options > 0 and turn.player.of_type("say.end"):
            return Verdict(False, "a line without an options frame")
        return NOT_APPLICABLE
    lines = turn.player.lines()
    for frame in frames:
        items: list[Frame] = list(frame.get("items") or [])
        problem = _options_problem(items, turn.max_options, turn.min_options) or _voice_problem(
            items, lines
        )
        if problem is not None:
            return Verdict(False, problem)
    return Verdict(True)


def nothing_raw_heard(turn: TurnEvidence) -> Verdict:
    """No HTML entity and no call syntax (JSON, `functions.x`) in anything the player hears."""
    heard = [*turn.player.lines(), *_labels(turn)]
    if not heard:
        return NOT_APPLICABLE
    for text in heard:
        found = _ENTITY.search(text) or _RAW_CALL.search(text)
        if found is not None:
            return Verdict(False, f"{found.group(0)!r} in {_short(text)!r}")
    return Verdict(True)


def numbers_grounded(turn: TurnEvidence) -> Verdict:
    """Every number the NPC says is in the scene, a tool result or the player's words."""
    lines = turn.player.lines()
    model = turn.model
    if not lines or model is None:
        return NOT_APPLICABLE
    known = {_plain_number(n) for text in (*model.grounding, turn.player.said)
             for n in _NUMBER.findall(text)}  # fmt: skip
    for line in lines:
        for number in _NUMBER.findall(line):
            value = _plain_number(number)
            if value not in known and not _derivable(value, known):
                return Verdict(False, f"{number} in {_short(line)!r} is in neither the scene "
                               "nor a tool result")  # fmt: skip
    return Verdict(True)


def turn_completed(turn: TurnEvidence) -> Verdict:
    """The turn ended with `encounter.idle`, every frame fit the schema, and no error frame."""
    player = turn.player
    if player.invalid_frames:
        return Verdict(False, f"invalid frame: {player.invalid_frames[0]}")
    errors = player.of_type("error")
    if errors:
        return Verdict(False, f"error {errors[0].get('code')}: {errors[0].get('message')}")
    if not player.ended_idle:
        return Verdict(False, "no encounter.idle")
    return Verdict(True)


RULES: Final[dict[str, Rule]] = {
    "completed": turn_completed,
    "spoke_via_action": spoke_through_action,
    "no_stage_directions": no_stage_directions,
    "in_persona": stayed_in_persona,
    "no_narration": no_narration,
    "no_echo": no_echo,
    "reflects_refusal": reflected_refusal,
    "no_false_claims": no_false_claims,
    "only_accepted_commits": only_accepted_commits,
    "options_well_formed": options_well_formed,
    "nothing_raw": nothing_raw_heard,
    "numbers_grounded": numbers_grounded,
}
"""Every rule by the name reports use, in report order."""


def score(turn: TurnEvidence) -> dict[str, Verdict]:
    """Every rule's verdict for one turn."""
    return {name: rule(turn) for name, rule in RULES.items()}


def _options_problem(items: Sequence[Frame], max_options: int, min_options: int) -> str | None:
    if len(items) > max_options:
        return f"{len(items)} options, more than the {max_options} allowed"
    if len(items) < min_options:
        return f"{len(items)} option(s), fewer than the {min_options} asked for"
    ids: set[str] = set()
    for item in items:
        option_id = str(item.get("id", ""))
        label = str(item.get("label", ""))
        if not option_id.strip() or option_id in ids:
            return f"option id {option_id!r} is blank or repeated"
        ids.add(option_id)
        if not label.strip():
            return f"option {option_id!r} has no label"
        if len(label) > MAX_LABEL_CHARS:
            return f"option {option_id!r} label is {len(label)} characters long"
        if _JUNK_LABEL.search(label):
            return f"option {option_id!r} label looks like markup or JSON: {_short(label)!r}"
        found = _ID_IN_LABEL.search(label)
        if found is not None:
            return f"option {option_id!r} label shows an id ({found.group(0)!r}): {label!r}"
    return None


def _labels(turn: TurnEvidence) -> list[str]:
    labels: list[str] = []
    for frame in turn.player.of_type("options"):
        items: list[Frame] = list(frame.get("items") or [])
        labels.extend(str(item.get("label", "")) for item in items)
    return labels


def _plain_number(text: str) -> str:
    value = text.replace(",", "")
    return value[:-2] if value.endswith(".0") else value


def _derivable(value: str, known: set[str]) -> bool:
    """Small counts (one to ten) and a product of two known numbers (2 x 450 = 900) pass."""
    try:
        number = float(value)
    except ValueError:
        return False
    if number <= 10:
        return True
    floats = [float(k) for k in known if k.replace(".", "", 1).isdigit()]
    counts = [float(n) for n in range(1, 11)]
    return any(a * b == number or a + b == number for a in floats for b in [*floats, *counts])


def _key_terms(text: str) -> set[str]:
    words = re.findall(r"[a-z][a-z'-]{3,}|\d[\d,]*", text.lower())
    return {word.replace(",", "") for word in words if word not in _STOP_WORDS}


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _voice_problem(items: Sequence[Frame], lines: Sequence[str]) -> str | None:
    """An option worded as the NPC's own line (or copied from it) instead of the player's."""
    spoken = [_words(line) for line in lines]
    for item in items:
        if item.get("offer"):
            continue  # the game writes an offer's label
        label = str(item.get("label", ""))
        found = _NPC_VOICE_LABEL.search(label)
        if found is not None:
            return f"option {item.get('id')!r} is the NPC's line, not the player's: {label!r}"
        words = _words(label)
        if len(words) >= MIN_ECHO_WORDS and any(
            _longest_run(words, heard) == len(words) for heard in spoken
        ):
            return f"option {item.get('id')!r} repeats the NPC's line: {label!r}"
    return None


def _acceptance_problem(turn: TurnEvidence, row: AuditRow, done: set[str]) -> str | None:
    offer = row.arguments.get(ACCEPTED_OFFER)
    if not offer:
        return f"{row.action} committed without the player's acceptance (no accepted offer)"
    offer = str(offer)
    if turn.player.opened:
        return f"{row.action} (offer {offer!r}) committed as the player walked up"
    if offer in done:
        return f"offer {offer!r} committed more than once"
    picked = turn.player.picked
    if picked is not None and picked != offer:
        return f"the player picked {picked!r} but offer {offer!r} committed"
    if offer not in turn.offers_shown:
        return f"offer {offer!r} committed, but the player was never shown it"
    return None


def _own_name(name: str) -> re.Pattern[str] | None:
    """The NPC's own name followed by a third-person verb ("Karsk doesn't haggle")."""
    parts = [
        re.escape(part)
        for part in re.findall(r"[A-Z][\w'-]{2,}", name)
        if part.casefold() not in _NAME_NOT_SELF
    ]
    if not parts:
        return None
    names = "|".join(parts)
    return re.compile(
        rf"\b(?:{names})\b(?! is the name)(?: (?:{names}))? {_THIRD_PERSON_VERB}", re.IGNORECASE
    )


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
    return [_words(part) for part in re.split(r"[.!?;]+", text)] + [_words(text)]


def _words(text: str) -> list[str]:
    """Lower-case words with thousands separators and punctuation gone ("1,000" is "1000")."""
    flat = text.casefold().replace("\u2019", "'")
    flat = re.sub(r"(?<=\d),(?=\d{3})", "", flat)
    return re.findall(r"[a-z0-9']+", flat)


def _longest_run(wanted: Sequence[str], heard: Sequence[str]) -> int:
    """The longest run of consecutive words of `wanted` that `heard` holds in the same order."""
    best = 0
    previous = [0] * (len(heard) + 1)
    for word in wanted:
        current = [0] * (len(heard) + 1)
        for j, other in enumerate(heard, start=1):
            if word == other:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best
