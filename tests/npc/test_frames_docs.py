"""The checked-in schema and protocol doc stay in step with the frame models."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from starharness.npc.frames import (
    DOWN_FRAME_TYPES,
    UP_FRAME_TYPES,
    ErrorCode,
    build_protocol,
    parse_up_frame,
    schema_text,
    write_schema,
)

DOCS = Path(__file__).resolve().parents[2] / "docs"
SCHEMA_FILE = DOCS / "frames.schema.json"
PROTOCOL_DOC = DOCS / "protocol.md"
REGENERATE = (
    "uv run star-harness schema --game starharness.voyage:GAME --out docs/frames.schema.json"
)


def _declared_values(schema: dict[str, Any]) -> tuple[list[str], tuple[int, int], int | None]:
    # The file says which game values it was generated for; regenerate with the same ones.
    definitions = schema["$defs"]
    attitude = definitions["Attitude"]
    max_options = definitions["Options"]["properties"]["items"].get("maxItems")
    return definitions["Mood"]["enum"], (attitude["minimum"], attitude["maximum"]), max_options


def test_the_checked_in_schema_is_the_sample_games_fresh_generation() -> None:
    from starharness.npc.game_schema import game_schema_text
    from starharness.voyage import GAME

    checked_in = SCHEMA_FILE.read_text(encoding="utf-8")
    assert checked_in == game_schema_text(GAME), f"the schema is stale; regenerate: {REGENERATE}"
    moods, attitude, max_options = _declared_values(json.loads(checked_in))
    assert (tuple(moods), attitude) == (GAME.moods, GAME.attitude_range)
    assert max_options == GAME.speech.max_options


def test_a_changed_model_makes_the_schema_differ(tmp_path: Path) -> None:
    checked_in = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    moods, attitude, _ = _declared_values(checked_in)
    other = tmp_path / "other.json"
    write_schema(other, build_protocol([*moods, "elated"], attitude))
    assert other.read_text(encoding="utf-8") != SCHEMA_FILE.read_text(encoding="utf-8")


def test_the_module_entry_point_writes_the_same_text(tmp_path: Path) -> None:
    out = tmp_path / "frames.schema.json"
    command = [sys.executable, "-m", "starharness.npc.frames.schema_gen", str(out)]
    options = ["--moods", "calm,cross", "--attitude", "-5,5", "--max-options", "3"]
    subprocess.run([*command, *options], check=True, capture_output=True, timeout=60)
    expected = schema_text(build_protocol(["calm", "cross"], (-5, 5), max_options=3))
    assert out.read_text(encoding="utf-8") == expected


def test_the_module_entry_point_refuses_a_bad_range(tmp_path: Path) -> None:
    out = tmp_path / "frames.schema.json"
    command = [sys.executable, "-m", "starharness.npc.frames.schema_gen", str(out)]
    result = subprocess.run(
        [*command, "--moods", "calm", "--attitude", "9"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "LOW,HIGH" in result.stdout + result.stderr
    assert not out.exists()


def _error_rows() -> dict[str, list[str]]:
    text = PROTOCOL_DOC.read_text(encoding="utf-8")
    section = text.split("\n## Error codes\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        match = re.fullmatch(r"\| `([a-z_]+)` \|(.*)\|", line)
        if match:
            rows[match.group(1)] = [cell.strip() for cell in match.group(2).split(" | ")]
    return rows


def test_every_error_code_has_a_row_with_its_meaning_and_advice() -> None:
    rows = _error_rows()
    for code in ErrorCode:
        assert code.value in rows, f"docs/protocol.md has no row for error code {code.value}"
        meaning, advice = rows[code.value]
        assert meaning == code.meaning
        assert advice
    assert set(rows) == {code.value for code in ErrorCode}, "the table lists unknown codes"


def test_every_frame_type_has_a_section() -> None:
    headings = set(re.findall(r"^### `([a-z.]+)`$", PROTOCOL_DOC.read_text(), re.MULTILINE))
    tags = {str(model.model_fields["t"].default) for model in UP_FRAME_TYPES + DOWN_FRAME_TYPES}
    assert tags == headings


def test_every_example_frame_in_the_doc_is_valid() -> None:
    text = PROTOCOL_DOC.read_text(encoding="utf-8")
    protocol = build_protocol(["neutral", "friendly", "annoyed", "hostile"], (-100, 100))
    examples = 0
    for line in text.splitlines():
        line = line.strip()
        direction, _, frame = line.partition(" ")
        if direction == "->" or (line.startswith('{"t":"') and _is_up(line)):
            parse_up_frame(frame if direction == "->" else line)
        elif direction == "<-" or line.startswith('{"t":"'):
            protocol.parse_down_frame(frame if direction == "<-" else line)
        else:
            continue
        examples += 1
    assert examples >= 30


def _is_up(line: str) -> bool:
    tag = json.loads(line)["t"]
    return tag in {str(model.model_fields["t"].default) for model in UP_FRAME_TYPES}
