"""The checked-in session-protocol schema is a fresh generation; the envelope parser is total."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from starharness.runtime.protocol import METHODS, UPDATE_METHOD, schema_text
from starharness.runtime.protocol.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    RpcError,
    parse_message,
)
from starharness.runtime.protocol.reference import reference_text

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "session-protocol.schema.json"
REGENERATE = (
    "uv run python -m starharness.runtime.protocol.schema_gen docs/session-protocol.schema.json"
)


def test_the_checked_in_schema_is_a_fresh_generation() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        f"docs/session-protocol.schema.json is stale; regenerate: {REGENERATE}"
    )


def test_the_schema_has_exactly_the_four_requests_and_the_update() -> None:
    schema = json.loads(schema_text())
    assert list(schema["methods"]) == ["initialize", "session", "prompt", "shutdown"]
    assert list(METHODS) == list(schema["methods"])
    kinds = schema["notifications"][UPDATE_METHOD]["params"]["discriminator"]["mapping"]
    assert sorted(kinds) == sorted(
        [
            "turn.start",
            "text.delta",
            "reasoning.delta",
            "tool.call",
            "tool.result",
            "approval.asked",
            "approval.decided",
            "plan.update",
            "job.update",
            "turn.end",
        ]
    )


def test_the_module_entry_point_writes_the_same_text(tmp_path: Path) -> None:
    out = tmp_path / "schema.json"
    command = [sys.executable, "-m", "starharness.runtime.protocol.schema_gen", str(out)]
    subprocess.run(command, check=True, capture_output=True, timeout=60)
    assert out.read_text(encoding="utf-8") == schema_text()


@given(st.text(max_size=200))
def test_any_text_is_a_request_or_a_json_rpc_error(text: str) -> None:
    try:
        request = parse_message(text)
    except RpcError as error:
        assert error.code in (PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS)
    else:
        assert isinstance(request.method, str) and request.method
        assert isinstance(request.params, dict)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(
    st.dictionaries(
        st.sampled_from(["jsonrpc", "id", "method", "params", "extra"]), _json, max_size=5
    )
)
def test_any_json_object_is_a_request_or_a_json_rpc_error(message: dict[str, object]) -> None:
    try:
        request = parse_message(json.dumps(message))
    except RpcError as error:
        assert error.code in (INVALID_REQUEST, INVALID_PARAMS)
    else:
        assert message["jsonrpc"] == "2.0"
        assert request.method == message["method"]


REFERENCE_FILE = SCHEMA_FILE.with_name("session-protocol.md")


def test_the_checked_in_reference_is_a_fresh_generation() -> None:
    assert REFERENCE_FILE.read_text(encoding="utf-8") == reference_text(), (
        "docs/session-protocol.md is stale; regenerate: uv run python -m "
        "starharness.runtime.protocol.schema_gen --reference docs/session-protocol.md"
    )
