"""Pure protocol rules: the ladder, clamps, hygiene, framing and message classification."""

from __future__ import annotations

import itertools
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from starharness.godot.protocol import (
    ALLOWED_METHODS,
    EDITOR_METHODS,
    LineSplitter,
    MalformedMessageError,
    OversizedLine,
    PlayError,
    RpcResponse,
    SceneChanged,
    encode_request,
    hygiene_problem,
    parse_incoming,
    timeout_ms,
)
from starharness.godot.protocol.ladder import clamp_int


def test_the_allow_list_is_27_methods_and_ping() -> None:
    assert len(EDITOR_METHODS) == 27
    assert EDITOR_METHODS | {"ping"} == ALLOWED_METHODS


@pytest.mark.parametrize(
    ("method", "params", "expected"),
    [
        ("ping", {}, 8_000),
        ("stop_scene", {}, 8_000),
        ("run_current_scene", {}, 11_000),
        ("run_current_scene", {"wait_ms": 0}, 8_000),
        ("play_main_scene", {"wait_ms": 20_000}, 23_000),
        ("play_main_scene", {"wait_ms": float("nan")}, 11_000),
        ("play_main_scene", {"wait_ms": "soon"}, 11_000),
        ("export_project", {}, 315_000),
        ("wait_for_import_done", {}, 38_000),
        ("wait_for_import_done", {"timeout_ms": 61_000}, 68_000),
        ("lint_scripts", {}, 32_000),
        ("inspect_script", {}, 32_000),
    ],
)
def test_the_timeout_ladder(method: str, params: dict[str, object], expected: int) -> None:
    assert timeout_ms(method, params) == expected


@given(st.one_of(st.floats(allow_nan=True), st.integers(), st.text(), st.none(), st.booleans()))
def test_clamps_always_land_in_range(value: object) -> None:
    clamped = clamp_int(value, default=8, low=1, high=16)
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        assert clamped == max(1, min(16, math.floor(value)))
    else:
        assert clamped == 8


def test_hygiene_names_the_offending_parameter() -> None:
    assert hygiene_problem({"paths": ["a"] * 512, "s": "x" * 4_096}) is None
    assert hygiene_problem({"paths": ["ok", "y" * 4_097]}) == (
        "paths[1]: string of 4097 characters exceeds 4096"
    )
    assert hygiene_problem({"value": {"inner": list(range(513))}}) == (
        "value.inner: array of 513 items exceeds 512"
    )
    assert hygiene_problem({"x": float("inf")}) == "x: must be a finite number"
    assert hygiene_problem({"x": {1, 2}}) == "x: set is not a JSON value"


@given(
    lines=st.lists(
        st.dictionaries(st.text(max_size=8), st.text(max_size=30), max_size=4), max_size=12
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=4_000), max_size=20),
)
def test_lines_survive_any_chunking(lines: list[dict[str, str]], cuts: list[int]) -> None:
    payload = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    points = sorted({min(cut, len(payload)) for cut in cuts} | {0, len(payload)})
    splitter = LineSplitter(max_line_bytes=10_000)
    received: list[bytes | OversizedLine] = []
    for start, end in itertools.pairwise(points):
        received.extend(splitter.feed(payload[start:end]))

    assert [json.loads(line) for line in received if isinstance(line, bytes)] == lines


def test_oversized_lines_are_dropped_and_the_stream_resyncs() -> None:
    splitter = LineSplitter(max_line_bytes=64)
    big = b'{"id":"req-7","ok":true,"result":"' + b"z" * 200 + b'"}'

    out = splitter.feed(big[:50]) + splitter.feed(big[50:120]) + splitter.feed(big[120:] + b"\n")
    after = splitter.feed(b'{"type":"scene_changed","path":"res://a.tscn"}\n\n  \n')

    assert len(out) == 1 and isinstance(out[0], OversizedLine)
    assert out[0].size == len(big) and out[0].request_id() == "req-7"
    assert after == [b'{"type":"scene_changed","path":"res://a.tscn"}']


def test_messages_are_told_apart_by_id_and_method() -> None:
    response = parse_incoming(b'{"id":"1","ok":true,"result":{"pong":true},"type":"x"}')
    scene = parse_incoming(b'{"type":"scene_changed","path":"res://a.tscn","clientId":"c9"}')
    error = parse_incoming(b'{"type":"play_error","severity":"warning","message":"m"}')

    assert response == RpcResponse(id="1", ok=True, result={"pong": True})
    assert isinstance(scene, SceneChanged) and scene.path == "res://a.tscn"
    assert isinstance(error, PlayError) and error.severity == "warning"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b"{nope", "not JSON"),
        (b"[1]", "must be a JSON object"),
        (b'{"id":"1","method":"ping"}', "only the bridge sends requests"),
        (b'{"id":"1","ok":"yes"}', "ok:"),
        (b'{"type":"telemetry"}', "unknown event type 'telemetry'"),
        (b'{"type":"play_error","severity":"fatal","message":"m"}', "severity"),
    ],
)
def test_malformed_messages_say_why(line: bytes, problem: str) -> None:
    with pytest.raises(MalformedMessageError, match=problem):
        parse_incoming(line)


def test_requests_carry_params_flat() -> None:
    line = encode_request("abc", "list_project_files", {"type": "scene", "limit": 5})

    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {
        "id": "abc",
        "method": "list_project_files",
        "type": "scene",
        "limit": 5,
    }
