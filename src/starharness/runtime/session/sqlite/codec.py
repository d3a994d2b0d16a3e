"""Rows of the events table: encoding with a checksum, and decoding that finds a torn tail.

Decoding is where stored data comes back: each event's data is checked against its type's
TypedDict here (kinds.stored_data), so a row of the wrong shape is a StoredEventError naming
the session, the event, its type and the field, not a KeyError in whoever reads it later.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

from ..errors import SessionCorruptError
from ..events import SessionDataError, SessionEvent, data_to_json, freeze_data, new_event
from ..kinds import stored_data

EventRow = tuple[str, int, int, str, str, int, int]
"""session_id, seq, time, type, data (JSON text), batch, crc -- the column order of INSERT."""
StoredRow = tuple[int, int, str, str, int, int]
"""seq, time, type, data, batch, crc -- the column order of a load."""


def row_checksum(session_id: str, seq: int, time: int, kind: str, data: str) -> int:
    return _checksum(session_id, seq, time, kind, data.encode())


def _checksum(session_id: str, seq: int, time: int, kind: str, data: bytes) -> int:
    head = f"{session_id}\x00{seq}\x00{time}\x00{kind}\x00".encode()
    return zlib.crc32(data, zlib.crc32(head))


def encode_event(session_id: str, event: SessionEvent, batch: int) -> EventRow:
    data = _data_utf8(event.data)
    crc = _checksum(session_id, event.seq, event.time, event.type, data)
    return (session_id, event.seq, event.time, event.type, data.decode(), batch, crc)


def _data_utf8(data: Mapping[str, Any]) -> bytes:
    """The compact JSON of frozen event data as UTF-8: the text `data_to_json` makes, encoded.

    pydantic-core writes it straight to bytes (about a quarter less than the json module and an
    encode, on the writer thread). Text with a lone surrogate (from surrogate-escaped input)
    has no UTF-8 form: it is stored with ASCII escapes, which read back to the same string.
    """
    try:
        return to_json(data)
    except PydanticSerializationError:
        return json.dumps(data, separators=(",", ":"), allow_nan=False).encode()


def encode_meta(meta: Any) -> str:
    return data_to_json(meta)


def decode_meta(text: str) -> Any:
    return freeze_data(json.loads(text, parse_constant=_refuse_constant), where="meta")


@dataclass(frozen=True, slots=True)
class DecodedLog:
    """Events that decoded cleanly; `torn_from` is the seq where a torn tail starts, if any."""

    events: list[SessionEvent]
    torn_from: int | None = None
    dropped: int = 0
    problem: str | None = None


def decode_log(session_id: str, rows: Sequence[StoredRow]) -> DecodedLog:
    """Decode rows in seq order. A damaged row in the last write starts a torn tail; damage in
    an earlier write raises SessionCorruptError (dropping it would lose committed events)."""
    events: list[SessionEvent] = []
    for index, row in enumerate(rows):
        problem = _row_problem(session_id, index, row)
        if problem is None:
            try:
                events.append(_decode(session_id, row))
                continue
            except (ValueError, SessionDataError) as exc:
                problem = f"has undecodable data ({exc})"
        last_batch = max(r[4] for r in rows)
        if any(r[4] != last_batch for r in rows[index:]):
            raise SessionCorruptError(
                f"session {session_id!r}: event {row[0]} {problem}, and it was written before the"
                " last write, so this is not a torn tail; the log was left untouched"
            )
        return DecodedLog(events, torn_from=index, dropped=len(rows) - index, problem=problem)
    return DecodedLog(events)


def _row_problem(session_id: str, index: int, row: StoredRow) -> str | None:
    seq, time, kind, data, _batch, crc = row
    if seq != index:
        return f"follows a gap (expected seq {index})"
    if row_checksum(session_id, seq, time, kind, data) != crc:
        return "fails its checksum"
    return None


def _decode(session_id: str, row: StoredRow) -> SessionEvent:
    seq, time, kind, data, _batch, _crc = row
    parsed = json.loads(data, parse_constant=_refuse_constant)
    if not isinstance(parsed, dict):
        raise SessionDataError(f"data is a JSON {type(parsed).__name__}, not an object")
    where = f"session {session_id!r}: event {seq}"
    return new_event(seq, time, kind, stored_data(kind, parsed, where))  # pyright: ignore[reportUnknownArgumentType]


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")
