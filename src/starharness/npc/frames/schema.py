"""The frame schema file: one function turns a protocol into the checked-in JSON text."""

from __future__ import annotations

import json
from pathlib import Path

from .protocol import FrameProtocol


def schema_text(protocol: FrameProtocol) -> str:
    """The schema file's exact text: stable key order, two-space indent, final newline."""
    return json.dumps(protocol.json_schema(), indent=2, ensure_ascii=False) + "\n"


def write_schema(path: Path | str, protocol: FrameProtocol) -> None:
    """Write the combined up and down JSON Schema of `protocol` to `path`."""
    Path(path).write_text(schema_text(protocol), encoding="utf-8")
