"""parse_up_frame: valid frames, unknown fields, and every bad_frame path with its message."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from starharness.npc.frames import (
    EncounterClose,
    EncounterOpen,
    EncounterSay,
    ErrorCode,
    ErrorFrame,
    FrameError,
    Hello,
    WorldTick,
    encode,
    parse_up_frame,
)


def _refusal(raw: str | bytes) -> FrameError:
    with pytest.raises(FrameError) as caught:
        parse_up_frame(raw)
    assert caught.value.code is ErrorCode.BAD_FRAME
    return caught.value


def test_each_up_frame_parses_to_its_model_with_camel_case_wire_names() -> None:
    assert parse_up_frame('{"t":"hello","playerId":"p1"}') == Hello(player_id="p1")
    assert parse_up_frame(
        '{"t":"encounter.open","id":"e1","npcId":"n1","playerId":"p1"}'
    ) == EncounterOpen(id="e1", npc_id="n1", player_id="p1")
    assert parse_up_frame('{"t":"encounter.say","id":"e1","text":"hi"}') == EncounterSay(
        id="e1", text="hi"
    )
    assert parse_up_frame(b'{"t":"encounter.say","id":"e1","optionId":"2"}') == EncounterSay(
        id="e1", option_id="2"
    )
    assert parse_up_frame('{"t":"encounter.close","id":"e1"}') == EncounterClose(id="e1")
    assert parse_up_frame('{"t":"world.tick","days":3}') == WorldTick(days=3)


def test_unknown_fields_are_ignored() -> None:
    frame = parse_up_frame('{"t":"hello","playerId":"p","extra":{"nested":[1,2]},"v":2}')
    assert frame == Hello(player_id="p")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("{", "not valid JSON"),
        ("", "not valid JSON"),
        ("nul", "not valid JSON"),
        ('{"t":"hello",}', "not valid JSON"),
        (b"\xff\xfe{}", "not valid UTF-8"),
    ],
)
def test_text_that_is_not_json_is_refused(raw: str | bytes, expected: str) -> None:
    assert expected in _refusal(raw).message


@pytest.mark.parametrize(
    ("raw", "kind"),
    [("[]", "an array"), ("3", "a number"), ('"x"', "a string"), ("null", "null"),
     ("true", "a boolean")],
)  # fmt: skip
def test_json_that_is_not_an_object_is_refused(raw: str, kind: str) -> None:
    assert _refusal(raw).message == f"frame must be a JSON object, got {kind}"


@pytest.mark.parametrize("raw", ["{}", '{"id":"e1","text":"hi"}'])
def test_a_frame_without_t_is_refused(raw: str) -> None:
    assert _refusal(raw).message == "frame has no 't' field naming its type"


@pytest.mark.parametrize(("raw", "kind"), [('{"t":3}', "a number"), ('{"t":null}', "null")])
def test_a_t_that_is_not_a_string_is_refused(raw: str, kind: str) -> None:
    message = _refusal(raw).message
    assert "'t'" in message
    assert message.endswith(kind)


@pytest.mark.parametrize("tag", ["encounter.dance", "say.delta", "welcome", "", "HELLO"])
def test_an_unknown_t_is_refused_and_the_known_ones_listed(tag: str) -> None:
    message = _refusal(json.dumps({"t": tag, "id": "e1"})).message
    assert f"unknown frame type 't': {tag!r}" in message
    for known in ("hello", "encounter.open", "encounter.say", "encounter.close", "world.tick"):
        assert known in message


@pytest.mark.parametrize(
    ("frame", "field", "problem"),
    [
        ({"t": "hello"}, "playerId", "is required"),
        ({"t": "hello", "playerId": 7}, "playerId", "valid string"),
        ({"t": "hello", "playerId": ""}, "playerId", "at least 1 character"),
        ({"t": "encounter.open", "id": "e", "npc_id": "n", "playerId": "p"}, "npcId", "required"),
        ({"t": "encounter.open", "id": "e", "npcId": None, "playerId": "p"}, "npcId", "string"),
        ({"t": "encounter.open", "id": ["e"], "npcId": "n", "playerId": "p"}, "id", "string"),
        ({"t": "encounter.say", "text": "hi"}, "id", "is required"),
        ({"t": "encounter.say", "id": "e", "text": 5}, "text", "valid string"),
        ({"t": "encounter.say", "id": "e", "optionId": 2}, "optionId", "valid string"),
        ({"t": "encounter.close"}, "id", "is required"),
        ({"t": "world.tick", "days": 0}, "days", "greater than or equal to 1"),
        ({"t": "world.tick", "days": "2"}, "days", "valid integer"),
        ({"t": "world.tick", "days": 1.5}, "days", "valid integer"),
        ({"t": "world.tick", "days": True}, "days", "valid integer"),
    ],
)
def test_an_invalid_field_is_refused_naming_the_frame_and_the_field(
    frame: dict[str, object], field: str, problem: str
) -> None:
    message = _refusal(json.dumps(frame)).message
    assert message.startswith(f"{frame['t']}: field '{field}'")
    assert problem in message


@pytest.mark.parametrize(
    ("frame", "problem"),
    [
        ({"t": "encounter.say", "id": "e1"}, "got neither"),
        ({"t": "encounter.say", "id": "e1", "text": "hi", "optionId": "1"}, "got both"),
    ],
)
def test_a_say_needs_exactly_one_of_text_and_option_id(
    frame: dict[str, object], problem: str
) -> None:
    error = _refusal(json.dumps(frame))
    assert error.message == (
        f"encounter.say: exactly one of 'text' or 'optionId' is required, {problem}"
    )
    assert error.encounter_id == "e1"


def test_several_problems_are_listed_together() -> None:
    message = _refusal('{"t":"encounter.open","id":"","npcId":1}').message
    assert "'id'" in message
    assert "'npcId'" in message
    assert "'playerId' is required" in message


def test_the_encounter_id_of_a_refused_frame_is_kept_when_readable() -> None:
    assert _refusal('{"t":"encounter.say","id":"e9","text":3}').encounter_id == "e9"
    assert _refusal('{"t":"encounter.say","id":9,"text":"x"}').encounter_id is None
    assert _refusal("[1]").encounter_id is None


def test_an_escaped_lone_surrogate_is_refused_rather_than_passed_on() -> None:
    assert "not valid JSON" in _refusal('{"t":"hello","playerId":"\\ud800"}').message


# The machine is shared: slow draws or runs under load are not failures of the code under test.
_patient = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

_json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
_json_value = st.recursive(
    _json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
_up_tags = st.sampled_from(
    ["hello", "encounter.open", "encounter.say", "encounter.close", "world.tick", "x"]
)
_field_names = st.sampled_from(["id", "npcId", "playerId", "text", "optionId", "days", "t"])


@_patient
@given(st.dictionaries(_field_names, _json_value), _up_tags)
def test_any_object_either_parses_or_gets_bad_frame(fields: dict[str, object], tag: str) -> None:
    raw = json.dumps({"t": tag, **{k: v for k, v in fields.items() if k != "t"}})
    try:
        frame = parse_up_frame(raw)
    except FrameError as error:
        assert error.code is ErrorCode.BAD_FRAME
        assert error.message
    else:
        assert frame.t == tag


@_patient
@given(st.text() | st.binary())
def test_any_text_or_bytes_either_parses_or_gets_bad_frame(raw: str | bytes) -> None:
    try:
        parse_up_frame(raw)
    except FrameError as error:
        assert error.code is ErrorCode.BAD_FRAME
        assert error.message


def test_every_error_code_has_a_one_line_meaning() -> None:
    assert [code.value for code in ErrorCode] == [
        "bad_frame", "bad_option", "unknown_encounter", "encounter_exists", "busy", "unknown_npc",
        "unknown_player", "npc_unavailable", "llm_unavailable", "unauthorized", "forbidden",
        "limit", "internal",
    ]  # fmt: skip
    for code in ErrorCode:
        assert code.meaning
        assert "\n" not in code.meaning


def test_a_refusal_becomes_an_error_frame_naming_the_encounter() -> None:
    frame = ErrorFrame.from_error(_refusal('{"t":"encounter.say","id":"e4"}'))
    assert frame.code is ErrorCode.BAD_FRAME
    assert frame.id == "e4"
    assert json.loads(encode(frame)) == {
        "t": "error",
        "id": "e4",
        "code": "bad_frame",
        "message": "encounter.say: exactly one of 'text' or 'optionId' is required, got neither",
    }
    assert "id" not in json.loads(encode(ErrorFrame.from_error(_refusal("[]"))))
