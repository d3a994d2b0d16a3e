"""Reading the speaking call's completed arguments: line, mood and options, leniently."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .words import copies


@dataclass(frozen=True, slots=True)
class SpeechFields:
    """Which argument of the game's speaking tool holds the line, the mood and the options."""

    line: str = "line"
    mood: str = "mood"
    options: str = "options"
    option_id: str = "id"
    option_label: str = "label"


@dataclass(frozen=True, slots=True)
class SpokenOption:
    """One reply the model offered the player."""

    id: str
    label: str


@dataclass(frozen=True, slots=True)
class FinalSpeech:
    """What a completed speaking call said, cleaned up for the frames."""

    line: str
    mood: str
    options: tuple[SpokenOption, ...]


def parse_arguments(raw: str) -> dict[str, Any]:
    """Parse completed tool-call arguments; empty text means no arguments.

    Raises ValueError naming the problem when the text is not a JSON object.
    """
    if not raw.strip():
        return {}
    value: object = json.loads(raw)
    if not isinstance(value, dict):
        raise ValueError(f"tool-call arguments must be a JSON object, got {type(value).__name__}")
    arguments: dict[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
    return arguments


def read_line(arguments: Mapping[str, object], field: str = "line") -> str:
    """The line, or an empty string when the field is missing or not a string."""
    line = arguments.get(field)
    return line if isinstance(line, str) else ""


def read_mood(
    arguments: Mapping[str, object], field: str, moods: Sequence[str], default: str
) -> str:
    """The declared mood named by the field (case and spaces forgiven), else `default`."""
    value = arguments.get(field)
    if not isinstance(value, str):
        return default
    if value in moods:
        return value
    wanted = value.strip().casefold()
    for mood in moods:
        if mood.casefold() == wanted:
            return mood
    return default


def read_options(
    arguments: Mapping[str, object],
    field: str,
    max_options: int,
    id_field: str = "id",
    label_field: str = "label",
) -> tuple[SpokenOption, ...]:
    """Options from a list of objects (`id_field`, `label_field`) or of plain label strings.

    Blank and repeated labels are dropped and at most `max_options` kept. When an id is missing,
    blank or repeated, every option is numbered "1", "2", ... instead, so ids stay unique.
    """
    value = arguments.get(field)
    if not isinstance(value, list):
        return ()
    items: list[object] = value  # pyright: ignore[reportUnknownVariableType]
    options: list[SpokenOption] = []
    labels: set[str] = set()
    for item in items:
        option = _option(item, id_field, label_field)
        if option is None or option.label in labels:
            continue
        labels.add(option.label)
        options.append(option)
        if len(options) == max_options:
            break
    ids = {option.id for option in options}
    if "" in ids or len(ids) < len(options):
        options = [SpokenOption(str(n), o.label) for n, o in enumerate(options, start=1)]
    return tuple(options)


def read_speech(
    arguments: Mapping[str, object],
    *,
    moods: Sequence[str],
    default_mood: str,
    max_options: int,
    fields: SpeechFields = SpeechFields(),
) -> FinalSpeech:
    """Line, mood and options of a completed speaking call, per the game's speech contract."""
    if default_mood not in moods:
        raise ValueError(f"default mood {default_mood!r} is not one of the moods {list(moods)}")
    line = read_line(arguments, fields.line)
    options = read_options(
        arguments, fields.options, max_options, fields.option_id, fields.option_label
    )
    # A small model fills options with stretches of its own line ("You see her and smile at
    # her as if she has just"): never the player's words, so they are dropped (the game's
    # fallback replies make up the number).
    return FinalSpeech(
        line=line,
        mood=read_mood(arguments, fields.mood, moods, default_mood),
        options=tuple(option for option in options if not copies(option.label, line)),
    )


def _option(item: object, id_field: str, label_field: str) -> SpokenOption | None:
    if isinstance(item, str):
        label = item.strip()
        return SpokenOption("", label) if label else None
    if not isinstance(item, dict):
        return None
    mapping: dict[Any, Any] = item  # pyright: ignore[reportUnknownVariableType]
    label = mapping.get(label_field)
    if not isinstance(label, str) or not label.strip():
        return None
    option_id = mapping.get(id_field)
    if isinstance(option_id, int) and not isinstance(option_id, bool):
        option_id = str(option_id)
    return SpokenOption(option_id.strip() if isinstance(option_id, str) else "", label.strip())
