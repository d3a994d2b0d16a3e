"""The host's reading of the runner's lines: any bytes give a call, an end or a clear error."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from starharness.runtime.codemode.protocol import ENDS, Broken, Call, End, read_line

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _line(message: Any) -> bytes:
    # The runner's own encoding (guest.py: json.dumps with compact separators).
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


@given(st.binary(max_size=200))
def test_any_bytes_are_read_without_raising(line: bytes) -> None:
    assert isinstance(read_line(line), Call | End | Broken)


@given(st.integers(), st.text(min_size=1), st.dictionaries(st.text(), JSON_VALUES, max_size=5))
def test_a_call_is_read_back_as_written(number: int, tool: str, args: dict[str, Any]) -> None:
    assert read_line(_line({"call": number, "tool": tool, "args": args})) == Call(tool, args)


@given(st.sampled_from(sorted(ENDS)), st.text(), st.text(), st.floats(0, 1e6))
def test_an_end_is_read_back_as_written(kind: str, message: str, trace: str, cpu: float) -> None:
    line = _line({"end": kind, "message": message, "traceback": trace, "cpu_s": cpu})
    assert read_line(line) == End(kind, message, trace, cpu)


@given(JSON_VALUES.filter(lambda value: not (isinstance(value, str) and value in ENDS)))
def test_an_unknown_end_is_a_protocol_error(kind: Any) -> None:
    found = read_line(_line({"end": kind}))
    assert isinstance(found, Broken) and found.why.startswith("reported an unknown end")


@given(JSON_VALUES)
def test_anything_but_a_call_or_an_end_is_a_protocol_error(value: Any) -> None:
    if isinstance(value, dict) and ("end" in value or "tool" in value):
        return
    found = read_line(_line(value))
    assert isinstance(found, Broken)
    assert found.why in (
        "sent a line that is not a JSON object",
        "sent a call without a tool name and an args object",
    )


def test_bad_lines_name_what_is_wrong() -> None:
    assert read_line(b"not json\n") == Broken("sent a line that is not JSON")
    assert read_line(b"\xff\xfe\n") == Broken("sent a line that is not JSON")
    assert read_line(b"[1, 2]\n") == Broken("sent a line that is not a JSON object")
    assert read_line(b'{"tool": "x", "args": []}\n') == Broken(
        "sent a call without a tool name and an args object"
    )
    assert read_line(b"[" * 100_000 + b"\n") in (
        Broken("sent a line nested too deeply"),
        Broken("sent a line that is not JSON"),
    )
    assert read_line(_line({"end": "ok", "cpu_s": True})) == End("ok")
