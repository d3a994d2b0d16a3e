"""build_protocol: a game's moods, attitude range, HUD and option cap reach models and schema."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, ValidationError

from starharness.npc.frames import (
    GENERIC_PROTOCOL,
    EncounterSay,
    ErrorCode,
    ErrorFrame,
    FrameError,
    OptionItem,
    SayEnd,
    build_protocol,
    encode,
)

MOODS = ["calm", "glad", "cross"]


class Gauge(BaseModel):
    level: int
    note: str | None


def test_mood_is_limited_to_the_declared_ones() -> None:
    protocol = build_protocol(MOODS, (0, 10))
    assert protocol.say_end(id="e", mood="glad").mood == "glad"
    with pytest.raises(ValidationError, match="calm"):
        protocol.say_end(id="e", mood="happy")
    with pytest.raises(FrameError) as caught:
        protocol.parse_down_frame('{"t":"say.end","id":"e","mood":"happy"}')
    assert caught.value.code is ErrorCode.BAD_FRAME
    assert "'mood'" in caught.value.message


def test_attitude_is_limited_to_the_range() -> None:
    protocol = build_protocol(MOODS, (-3, 7))
    assert protocol.encounter_opened(id="e", npc_name="N", attitude=-3).attitude == -3
    assert protocol.encounter_opened(id="e", npc_name="N", attitude=7).attitude == 7
    for outside in (-4, 8):
        with pytest.raises(ValidationError, match="attitude"):
            protocol.encounter_opened(id="e", npc_name="N", attitude=outside)


def test_the_generic_protocol_takes_any_mood_and_attitude() -> None:
    assert GENERIC_PROTOCOL.say_end is SayEnd
    assert GENERIC_PROTOCOL.say_end(id="e", mood="anything").mood == "anything"
    assert GENERIC_PROTOCOL.encounter_opened(id="e", npc_name="", attitude=10**9).attitude
    with pytest.raises(ValidationError):
        SayEnd(id="e", mood="")


def test_a_hud_model_shapes_hud_and_welcome() -> None:
    protocol = build_protocol(MOODS, (0, 1), hud_schema=Gauge)
    hud = protocol.hud(player_id="p", data={"level": 2, "note": None})
    assert hud.data == Gauge(level=2, note=None)
    # A None inside the game's data is the game's business and stays on the wire.
    assert json.loads(encode(hud)) == {
        "t": "hud",
        "playerId": "p",
        "data": {"level": 2, "note": None},
    }
    with pytest.raises(ValidationError, match="level"):
        protocol.hud(player_id="p", data={"note": "x"})
    schema = protocol.json_schema()["$defs"]
    assert schema["Hud"]["properties"]["data"]["$ref"] == "#/$defs/Gauge"
    assert schema["Welcome"]["properties"]["hud"]["$ref"] == "#/$defs/Gauge"
    assert set(schema["Gauge"]["properties"]) == {"level", "note"}


def test_max_options_caps_the_options_frame() -> None:
    protocol = build_protocol(MOODS, (0, 1), max_options=2)
    items = [OptionItem(id=str(n), label=f"option {n}") for n in range(3)]
    assert len(protocol.options(id="e", items=items[:2]).items) == 2
    with pytest.raises(ValidationError, match="items"):
        protocol.options(id="e", items=items)
    assert protocol.json_schema()["$defs"]["Options"]["properties"]["items"]["maxItems"] == 2


def test_the_schema_names_mood_and_attitude() -> None:
    schema = build_protocol(MOODS, (-100, 100)).json_schema()
    definitions = schema["$defs"]
    assert definitions["Mood"]["enum"] == MOODS
    assert definitions["SayEnd"]["properties"]["mood"] == {"$ref": "#/$defs/Mood"}
    assert (definitions["Attitude"]["minimum"], definitions["Attitude"]["maximum"]) == (-100, 100)
    assert definitions["EncounterOpened"]["properties"]["attitude"] == {"$ref": "#/$defs/Attitude"}
    assert "Mood" not in GENERIC_PROTOCOL.json_schema()["$defs"]


def test_the_schema_covers_both_directions_with_wire_names_and_required_tags() -> None:
    schema = build_protocol(MOODS, (0, 1)).json_schema()
    definitions = schema["$defs"]
    up_tags = set(definitions["UpFrame"]["discriminator"]["mapping"])
    down_tags = set(definitions["DownFrame"]["discriminator"]["mapping"])
    assert up_tags == {"hello", "encounter.open", "encounter.say", "encounter.close", "world.tick"}
    assert down_tags == {
        "welcome", "encounter.opened", "say.delta", "say.end", "options", "action",
        "encounter.idle", "scene.players", "error", "world.event", "hud",
    }  # fmt: skip
    assert schema["anyOf"] == [{"$ref": "#/$defs/UpFrame"}, {"$ref": "#/$defs/DownFrame"}]
    assert {"id", "npcId", "playerId"} <= set(definitions["EncounterOpen"]["properties"])
    assert "npcName" in definitions["EncounterOpened"]["properties"]
    assert "locationId" in definitions["WorldEvent"]["properties"]
    assert "optionId" in definitions["EncounterSay"]["properties"]
    for name in up_tags | down_tags:
        model = (
            definitions["DownFrame"]["discriminator"]["mapping"].get(name)
            or definitions["UpFrame"]["discriminator"]["mapping"][name]
        )
        required = definitions[model.removeprefix("#/$defs/")]["required"]
        assert required[0] == "t"
    assert "protocol" in definitions["Welcome"]["required"]
    assert definitions["ErrorFrame"]["properties"]["id"] == {
        "minLength": 1,
        "title": "id",
        "type": "string",
    }
    assert "id" not in definitions["ErrorFrame"]["required"]
    assert definitions["ErrorCode"]["enum"] == [code.value for code in ErrorCode]


def test_encode_is_compact_and_leaves_out_an_unset_optional_field() -> None:
    assert encode(ErrorFrame(code=ErrorCode.BUSY, message="m")) == (
        '{"t":"error","code":"busy","message":"m"}'
    )
    assert encode(ErrorFrame(id="e1", code=ErrorCode.LIMIT, message="m")) == (
        '{"t":"error","id":"e1","code":"limit","message":"m"}'
    )
    assert encode(EncounterSay(id="e", option_id="2")) == (
        '{"t":"encounter.say","id":"e","optionId":"2"}'
    )


@pytest.mark.parametrize(
    ("moods", "attitude", "max_options", "problem"),
    [
        ([], (0, 1), None, "at least one mood"),
        (["a", ""], (0, 1), None, "empty"),
        (["a", "b", "a"], (0, 1), None, "repeated: a"),
        (["a"], (2, 1), None, "low <= high"),
        (["a"], (0, 1), 0, "max_options"),
    ],
)
def test_build_protocol_refuses_bad_declarations(
    moods: list[str], attitude: tuple[int, int], max_options: int | None, problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        build_protocol(moods, attitude, max_options=max_options)


def test_build_protocol_refuses_a_single_string_of_moods() -> None:
    with pytest.raises(TypeError, match="not one string"):
        build_protocol("calm", (0, 1))


def test_parse_down_frame_refuses_unknown_t_listing_down_frames() -> None:
    with pytest.raises(FrameError) as caught:
        GENERIC_PROTOCOL.parse_down_frame('{"t":"hello","playerId":"p"}')
    assert "unknown frame type 't': 'hello'" in caught.value.message
    assert "say.delta" in caught.value.message
