"""The runner's lines, read by the host: a call, the end of the program, or a protocol error."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

ENDS = frozenset({"ok", "error", "memory", "blocked", "exit", "unconfined"})
"""How the runner says a program ended (see guest.py)."""


@dataclass(frozen=True, slots=True)
class Call:
    """The program calls host tool `tool` with `args`."""

    tool: str
    args: dict[str, Any]


@dataclass(frozen=True, slots=True)
class End:
    """The program ended: `kind` is one of ENDS; `cpu_s` its own CPU time if it said."""

    kind: str
    message: str = ""
    traceback: str = ""
    cpu_s: float | None = None


@dataclass(frozen=True, slots=True)
class Broken:
    """The line is not the protocol; `why` finishes the sentence "the program ..."."""

    why: str


def read_line(line: bytes) -> Call | End | Broken:
    """One line from the runner, checked; never raises."""
    try:
        message: object = json.loads(line)
    except ValueError:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return Broken("sent a line that is not JSON")
    except RecursionError:
        return Broken("sent a line nested too deeply")
    if not isinstance(message, dict):
        return Broken("sent a line that is not a JSON object")
    fields = cast(dict[str, Any], message)
    if "end" in fields:
        return _end(fields)
    tool, args = fields.get("tool"), fields.get("args")
    if not isinstance(tool, str) or not isinstance(args, dict):
        return Broken("sent a call without a tool name and an args object")
    return Call(tool, cast(dict[str, Any], args))


def _end(fields: dict[str, Any]) -> End | Broken:
    kind = fields["end"]
    if not isinstance(kind, str) or kind not in ENDS:
        return Broken(f"reported an unknown end {str(kind)[:40]!r}")
    cpu = fields.get("cpu_s")
    cpu_s = float(cpu) if isinstance(cpu, int | float) and not isinstance(cpu, bool) else None
    return End(kind, _text(fields.get("message")), _text(fields.get("traceback")), cpu_s)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
