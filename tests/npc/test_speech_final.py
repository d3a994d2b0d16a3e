"""Reading line, mood and options from a completed speaking call, as real models send them."""

from __future__ import annotations

import pytest

from starharness.npc.speech import (
    FinalSpeech,
    SpeechFields,
    SpokenOption,
    parse_arguments,
    read_line,
    read_mood,
    read_options,
    read_speech,
)

MOODS = ("neutral", "friendly", "hostile")


def test_parse_arguments_reads_an_object_and_treats_empty_text_as_none() -> None:
    assert parse_arguments('{"line":"hi"}') == {"line": "hi"}
    assert parse_arguments("  ") == {}
    with pytest.raises(ValueError, match="must be a JSON object, got list"):
        parse_arguments('["hi"]')
    with pytest.raises(ValueError):
        parse_arguments('{"line":')


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("friendly", "friendly"),
        (" Friendly ", "friendly"),
        ("HOSTILE", "hostile"),
        ("elated", "neutral"),
        (3, "neutral"),
        (None, "neutral"),
    ],
)
def test_an_unknown_mood_becomes_the_default(value: object, expected: str) -> None:
    assert read_mood({"mood": value}, "mood", MOODS, "neutral") == expected


def test_a_missing_mood_becomes_the_default() -> None:
    assert read_mood({}, "mood", MOODS, "friendly") == "friendly"


def test_options_from_objects_keep_their_ids() -> None:
    arguments = {"options": [{"id": "a", "label": "Yes"}, {"id": "b", "label": " No "}]}
    assert read_options(arguments, "options", 4) == (
        SpokenOption("a", "Yes"),
        SpokenOption("b", "No"),
    )


def test_options_from_strings_are_numbered() -> None:
    assert read_options({"options": ["Yes", "No"]}, "options", 4) == (
        SpokenOption("1", "Yes"),
        SpokenOption("2", "No"),
    )


def test_missing_or_repeated_ids_renumber_every_option() -> None:
    repeated = {"options": [{"id": "x", "label": "A"}, {"id": "x", "label": "B"}]}
    assert [o.id for o in read_options(repeated, "options", 4)] == ["1", "2"]
    missing = {"options": [{"id": "x", "label": "A"}, {"label": "B"}]}
    assert [o.id for o in read_options(missing, "options", 4)] == ["1", "2"]
    numeric = {"options": [{"id": 7, "label": "A"}, {"id": 8, "label": "B"}]}
    assert [o.id for o in read_options(numeric, "options", 4)] == ["7", "8"]


def test_bad_blank_and_repeated_options_are_dropped_and_the_rest_capped() -> None:
    arguments = {
        "options": ["One", "", "  ", 5, None, {"label": 3}, {"id": "z"}, "One", "Two", "Three"]
    }
    labels = [option.label for option in read_options(arguments, "options", 2)]
    assert labels == ["One", "Two"]


@pytest.mark.parametrize("value", [None, "Yes", {"label": "Yes"}, 3])
def test_options_that_are_not_a_list_mean_none(value: object) -> None:
    assert read_options({"options": value}, "options", 4) == ()


def test_options_use_the_game_s_field_names() -> None:
    arguments = {"choices": [{"key": "k1", "text": "Go"}]}
    assert read_options(arguments, "choices", 3, "key", "text") == (SpokenOption("k1", "Go"),)


def test_read_line_needs_a_string() -> None:
    assert read_line({"line": "Hi"}) == "Hi"
    assert read_line({"line": ["Hi"]}) == ""
    assert read_line({}, "say") == ""


def test_read_speech_applies_the_whole_contract() -> None:
    fields = SpeechFields(line="say", mood="feeling", options="replies")
    arguments = {"feeling": "Friendly", "replies": ["Sure", "Later", "No"], "say": "Hello."}
    speech = read_speech(
        arguments, moods=MOODS, default_mood="neutral", max_options=2, fields=fields
    )
    assert speech == FinalSpeech(
        line="Hello.",
        mood="friendly",
        options=(SpokenOption("1", "Sure"), SpokenOption("2", "Later")),
    )


def test_read_speech_refuses_a_default_that_is_not_a_mood() -> None:
    with pytest.raises(ValueError, match="'calm' is not one of the moods"):
        read_speech({}, moods=MOODS, default_mood="calm", max_options=2)


@pytest.mark.parametrize(
    ("label", "kept"),
    [
        ("You see her and smile at her", False),  # a stretch of the line: dropped
        ("SMILE at her, as if", False),  # case and punctuation aside
        ("as if", True),  # too short to be a copy
        ("Smile at me properly", True),  # words of the line, not a stretch of it
    ],
)
def test_an_option_that_only_copies_the_line_is_dropped(label: str, kept: bool) -> None:
    arguments = {"line": "You see her and smile at her as if she knew.", "options": [label, "Bye"]}
    speech = read_speech(arguments, moods=MOODS, default_mood="neutral", max_options=4)
    assert [o.label for o in speech.options] == ([label, "Bye"] if kept else ["Bye"])
