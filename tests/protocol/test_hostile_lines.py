"""Protocol servers survive every line: `acp` and `rpc` as real child processes fed hostile lines
(non-objects, batches, bad JSON, deep nesting, a 5,000-digit id, an over-16 MB line) answer each
once and go on serving; the line parser and the line reader, under hypothesis, never crash."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from session_protocol_support import child_env, mock_rows, write_patch
from starharness.runtime.acp.transport import checked_message
from starharness.runtime.protocol import jsonrpc
from starharness.runtime.protocol.connection import Connection
from starharness.runtime.protocol.host import SessionHost
from starharness.runtime.protocol.jsonrpc import MAX_DEPTH, MAX_LINE, RpcError
from starharness.runtime.protocol.lines import LineReader, LineTooLongError

DEEP = (
    '{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"a":' + "[" * 1500 + "]" * 1500 + "}}"
)
HUGE_ID = '{"jsonrpc":"2.0","id":' + "9" * 5000 + ',"method":"initialize","params":{}}'
SHALLOW_BUT_TOO_DEEP = (
    '{"jsonrpc":"2.0","id":"d","method":"initialize","params":{"a":'
    + "[" * MAX_DEPTH
    + "]" * MAX_DEPTH
    + "}}"
)
OVERSIZED = '{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"a":"' + "x" * MAX_LINE + '"}}'


class Child:
    """A `star-harness` child on pipes: write lines, read answers one line at a time."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send(self, *lines: str) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        for line in lines:
            stdin.write(line.encode("utf-8") + b"\n")
            await stdin.drain()

    async def answer(self) -> dict[str, Any]:
        stdout = self.process.stdout
        assert stdout is not None
        line = await asyncio.wait_for(stdout.readline(), 60)
        assert line, "the child ended instead of answering"
        return cast("dict[str, Any]", json.loads(line))

    async def answers(self, count: int) -> list[dict[str, Any]]:
        return [await self.answer() for _ in range(count)]


@asynccontextmanager
async def child(command: str, home: Path, tmp_path: Path) -> AsyncIterator[Child]:
    # The model is never called: nothing here starts a turn.
    patch = write_patch(tmp_path, mock_rows("http://127.0.0.1:9/v1", None))
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "starharness.cli",
        command,
        "--patch",
        str(patch),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=child_env(home),
        cwd=tmp_path,
        limit=4 * MAX_LINE,
    )
    try:
        yield Child(process)
        assert process.returncode is None, "the child ended while it was still being fed"
        assert process.stdin is not None
        process.stdin.close()
        assert await asyncio.wait_for(process.wait(), 60) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def _error(answer: dict[str, Any], code: int, request_id: Any = None) -> str:
    assert answer.get("jsonrpc") == "2.0", answer
    assert answer.get("id") == request_id, answer
    assert answer["error"]["code"] == code, answer
    return str(answer["error"]["message"])


ACP_INIT = '{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":1}}'
HOSTILE = [
    ("[]", jsonrpc.INVALID_REQUEST, "batches are not supported"),
    ("42", jsonrpc.INVALID_REQUEST, "JSON object"),
    ("null", jsonrpc.INVALID_REQUEST, "JSON object"),
    ('"x"', jsonrpc.INVALID_REQUEST, "JSON object"),
    (f"[{ACP_INIT},{ACP_INIT}]", jsonrpc.INVALID_REQUEST, "batches are not supported"),
    ("{bad json", jsonrpc.PARSE_ERROR, "not JSON"),
    (DEEP, jsonrpc.INVALID_REQUEST, f"nested more than {MAX_DEPTH} deep"),
    (HUGE_ID, jsonrpc.INVALID_REQUEST, "more than 4300 digits"),
]


async def test_acp_answers_every_hostile_line_and_serves_on(home: Path, tmp_path: Path) -> None:
    async with child("acp", home, tmp_path) as acp:
        for line, code, words in HOSTILE:
            await acp.send(line)
            assert words in _error(await acp.answer(), code), line[:80]
        await acp.send(
            '{"jsonrpc":"2.0","id":[1],"result":{}}',  # an id the library could not even hash
            '{"jsonrpc":"2.0","id":7,"error":"not an object"}',
            '{"jsonrpc":"1.0","id":8,"method":"initialize"}',
            SHALLOW_BUT_TOO_DEEP,
        )
        _error(await acp.answer(), jsonrpc.INVALID_REQUEST)
        _error(await acp.answer(), jsonrpc.INVALID_REQUEST, 7)
        _error(await acp.answer(), jsonrpc.INVALID_REQUEST, 8)
        _error(await acp.answer(), jsonrpc.INVALID_REQUEST, "d")
        await acp.send(OVERSIZED, ACP_INIT)
        assert "longer than" in _error(await acp.answer(), jsonrpc.INVALID_REQUEST)
        answer = await acp.answer()  # exactly one answer for the long line: this is the next
        assert answer["id"] == 9 and answer["result"]["agentInfo"]["name"] == "star-harness"


async def test_rpc_answers_deep_huge_and_oversized_lines_once_and_serves_on(
    home: Path, tmp_path: Path
) -> None:
    async with child("rpc", home, tmp_path) as rpc:
        for line, code, words in HOSTILE:
            await rpc.send(line)
            assert words in _error(await rpc.answer(), code), line[:80]
        await rpc.send(SHALLOW_BUT_TOO_DEEP, OVERSIZED)
        _error(await rpc.answer(), jsonrpc.INVALID_REQUEST, "d")
        assert "longer than" in _error(await rpc.answer(), jsonrpc.INVALID_REQUEST)
        await rpc.send('{"jsonrpc":"2.0","id":"last","method":"initialize","params":{}}')
        answer = await rpc.answer()  # not a second answer for the long line
        assert answer["id"] == "last" and "result" in answer, answer


# --- the line parser: any text gets exactly one answer, or none for a valid notification ---

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
_envelopes = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2]),
        "id": st.none()
        | st.integers()
        | st.text(max_size=300)
        | st.floats()
        | st.lists(st.integers(), max_size=1),
        "method": st.sampled_from(["initialize", "", "x"]) | st.integers(),
        "params": _json_values,
        "result": _json_values,
        "error": _json_values,
    },
)
_lines = st.one_of(
    st.text(max_size=60),
    _json_values.map(json.dumps),
    _envelopes.map(json.dumps),
    st.lists(_envelopes, max_size=3).map(json.dumps),
    st.integers(1, 3 * MAX_DEPTH).map(
        lambda n: '{"jsonrpc":"2.0","method":"m","params":{"a":' + "[" * n + "]" * n + "}}"
    ),
    st.integers(4000, 6000).map(lambda n: '{"jsonrpc":"2.0","id":' + "7" * n + ',"method":"m"}'),
    _envelopes.map(json.dumps).map(lambda text: text[: len(text) // 2]),
)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in cast("dict[str, Any]", value).values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in cast("list[Any]", value)), default=0)
    return 0


def _is_notification(line: str) -> bool:
    """The documented silence: a valid request without an id gets no answer."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return False
    if not isinstance(value, dict):
        return False
    fields = cast("dict[str, Any]", value)
    method = fields.get("method")
    return (
        fields.get("jsonrpc") == "2.0"
        and "id" not in fields
        and isinstance(method, str)
        and bool(method)
        and isinstance(fields.get("params", {}), dict)
        and _depth(fields) <= MAX_DEPTH
    )


class _Host:
    """Answers every well-formed call with an empty object (the parser is what is tested)."""

    def __init__(self) -> None:
        self.shutdown_requested = asyncio.Event()

    async def call(self, method: str, params: dict[str, Any]) -> str:
        return "{}"

    async def aclose(self) -> None:
        return None


@settings(max_examples=300)
@given(line=_lines)
def test_every_line_gets_one_answer_or_the_notification_silence(line: str) -> None:
    async def run() -> list[str]:
        answers: list[str] = []
        connection = Connection(cast(SessionHost, _Host()), answers.append)
        connection.handle(line)
        for _ in range(20):
            await asyncio.sleep(0)
        return answers

    answers = asyncio.run(run())
    assert len(answers) == (0 if _is_notification(line) else 1), (line[:200], answers)
    for answer in answers:
        parsed = json.loads(answer)
        assert parsed["jsonrpc"] == "2.0" and ("result" in parsed) != ("error" in parsed)
        assert jsonrpc.valid_id(parsed["id"])


@settings(max_examples=300)
@given(line=_lines)
def test_acp_checks_every_line_without_crashing(line: str) -> None:
    try:
        message = checked_message(line)
    except RpcError as error:
        assert error.code in (jsonrpc.PARSE_ERROR, jsonrpc.INVALID_REQUEST)
        assert jsonrpc.valid_id(error.request_id)
        return
    # What reaches the library is an object it can route without failing in its reader.
    assert message["jsonrpc"] == "2.0"
    assert "id" not in message or jsonrpc.valid_id(message["id"])
    assert ("method" in message and isinstance(message["method"], str)) or (
        "result" in message or isinstance(message["error"], dict)
    )


# --- the line reader: one item per line, a long line skipped whole, in any chunking ---

_LIMIT = 64


@settings(max_examples=300)
@given(
    lines=st.lists(st.binary(max_size=3 * _LIMIT).map(lambda b: b.replace(b"\n", b"")), max_size=8),
    final_newline=st.booleans(),
    chunk=st.integers(1, 4 * _LIMIT),
)
def test_the_line_reader_reports_each_long_line_once(
    lines: list[bytes], final_newline: bool, chunk: int
) -> None:
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")

    async def run() -> list[bytes | None]:
        reader = asyncio.StreamReader(limit=_LIMIT)

        async def feed() -> None:
            for start in range(0, len(data), chunk):
                reader.feed_data(data[start : start + chunk])
                await asyncio.sleep(0)
            reader.feed_eof()

        feeder = asyncio.create_task(feed())
        got: list[bytes | None] = []
        incoming = LineReader(reader, _LIMIT)
        while True:
            try:
                line = await incoming.read()
            except LineTooLongError:
                got.append(None)
                continue
            if line is None:
                break
            got.append(line)
        await feeder
        return got

    expected: list[bytes | None] = [line if len(line) <= _LIMIT else None for line in lines]
    if lines and not final_newline and lines[-1] == b"":
        expected.pop()  # "a\n" and "a\n" + "" are the same input
    assert asyncio.run(run()) == expected
