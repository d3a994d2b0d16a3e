"""Every frame type survives encode -> parse unchanged, and its wire form matches the schema."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from starharness.npc.frames import (
    DOWN_FRAME_TYPES,
    GENERIC_PROTOCOL,
    UP_FRAME_TYPES,
    EncounterClose,
    EncounterOpen,
    EncounterSay,
    ErrorCode,
    Frame,
    FrameProtocol,
    Hello,
    NpcEntry,
    OptionItem,
    ScenePlayer,
    WorldTick,
    build_protocol,
    encode,
    parse_up_frame,
)

# 35 parametrised cases: fewer examples each keeps the file fast while covering every frame.
_patient = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

MOODS = ("neutral", "friendly", "annoyed", "hostile")


class PlayerView(BaseModel):
    """A HUD model as a game might declare it."""

    score: int
    label: str
    tags: list[str]


GAME = build_protocol(MOODS, (-100, 100), max_options=4)
GAME_WITH_HUD = build_protocol(MOODS, (-5, 5), hud_schema=PlayerView)

_ids = st.text(min_size=1, max_size=12)
_text = st.text(max_size=40)
_json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text
)
_json_object = st.dictionaries(
    st.text(max_size=6),
    st.recursive(
        _json_leaf,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
        ),
        max_leaves=6,
    ),
    max_size=4,
)
_player_views = st.builds(PlayerView, score=st.integers(), label=_text, tags=st.lists(_text))


def _up_strategies() -> dict[type[Frame], st.SearchStrategy[Frame]]:
    return {
        Hello: st.builds(Hello, player_id=_ids),
        EncounterOpen: st.builds(EncounterOpen, id=_ids, npc_id=_ids, player_id=_ids),
        EncounterSay: st.one_of(
            st.builds(EncounterSay, id=_ids, text=_ids),
            st.builds(EncounterSay, id=_ids, option_id=_ids),
        ),
        EncounterClose: st.builds(EncounterClose, id=_ids),
        WorldTick: st.builds(WorldTick, days=st.integers(1, 10**6)),
    }


def _down_strategies(protocol: FrameProtocol) -> dict[type[Frame], st.SearchStrategy[Frame]]:
    moods = st.sampled_from(protocol.moods) if protocol.moods else _ids
    low, high = protocol.attitude_range or (-(2**40), 2**40)
    huds: st.SearchStrategy[Any] = _player_views if protocol is GAME_WITH_HUD else _json_object
    options = st.lists(st.builds(OptionItem, id=_ids, label=_ids), max_size=protocol.max_options)
    return {
        protocol.welcome: st.builds(
            protocol.welcome,
            hud=huds,
            npcs=st.lists(st.builds(NpcEntry, id=_ids, name=_text, location_id=_text)),
        ),
        protocol.encounter_opened: st.builds(
            protocol.encounter_opened, id=_ids, npc_name=_text, attitude=st.integers(low, high)
        ),
        protocol.say_delta: st.builds(protocol.say_delta, id=_ids, text=_ids),
        protocol.say_end: st.builds(protocol.say_end, id=_ids, mood=moods),
        protocol.options: st.builds(protocol.options, id=_ids, items=options),
        protocol.action: st.builds(
            protocol.action, id=_ids, name=_ids, ok=st.booleans(), summary=_text
        ),
        protocol.encounter_idle: st.builds(protocol.encounter_idle, id=_ids),
        protocol.scene_players: st.builds(
            protocol.scene_players,
            id=_ids,
            players=st.lists(st.builds(ScenePlayer, id=_ids, name=_ids)),
        ),
        protocol.error: st.builds(
            protocol.error, id=st.none() | _ids, code=st.sampled_from(ErrorCode), message=_text
        ),
        protocol.world_event: st.builds(protocol.world_event, location_id=_text, headline=_text),
        protocol.hud: st.builds(protocol.hud, player_id=_ids, data=huds),
    }


PROTOCOLS = {"generic": GENERIC_PROTOCOL, "game": GAME, "game-with-hud": GAME_WITH_HUD}


def test_there_is_a_strategy_for_every_frame_type() -> None:
    assert set(_up_strategies()) == set(UP_FRAME_TYPES)
    generic = {model.__name__ for model in _down_strategies(GENERIC_PROTOCOL)}
    assert generic == {model.__name__ for model in DOWN_FRAME_TYPES}
    for protocol in PROTOCOLS.values():
        assert set(_down_strategies(protocol)) == set(protocol.down_frame_types)


def _validator(protocol: FrameProtocol) -> Any:
    # jsonschema arrives with the mcp dependency; without it only the schema check is skipped.
    try:
        import jsonschema
    except ImportError:
        return None
    return jsonschema.Draft202012Validator(protocol.json_schema())


_VALIDATORS = {name: _validator(protocol) for name, protocol in PROTOCOLS.items()}


def _assert_wire_form(frame: Frame, wire: str, protocol_name: str) -> None:
    assert "\n" not in wire  # one compact line
    data = json.loads(wire)
    assert data["t"] == type(frame).model_fields["t"].default
    assert None not in data.values()
    validator = _VALIDATORS[protocol_name]
    if validator is not None:
        validator.validate(data)


@_patient
@pytest.mark.parametrize("model", UP_FRAME_TYPES, ids=lambda m: m.__name__)
@given(data=st.data())
def test_up_frames_round_trip(model: type[Frame], data: st.DataObject) -> None:
    frame = data.draw(_up_strategies()[model])
    wire = encode(frame)
    assert parse_up_frame(wire) == frame
    _assert_wire_form(frame, wire, "generic")


@_patient
@pytest.mark.parametrize("protocol_name", PROTOCOLS)
@pytest.mark.parametrize(
    "index", range(len(DOWN_FRAME_TYPES)), ids=[m.__name__ for m in DOWN_FRAME_TYPES]
)
@given(data=st.data())
def test_down_frames_round_trip(protocol_name: str, index: int, data: st.DataObject) -> None:
    protocol = PROTOCOLS[protocol_name]
    model = protocol.down_frame_types[index]
    frame = data.draw(_down_strategies(protocol)[model])
    wire = encode(frame)
    parsed = protocol.parse_down_frame(wire)
    assert type(parsed) is model
    assert parsed == frame
    _assert_wire_form(frame, wire, protocol_name)
