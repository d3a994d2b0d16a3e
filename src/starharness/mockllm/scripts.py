"""Script files (YAML or JSON): which conversation plays which steps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..responder.steps import StepInput


class ScriptFile(BaseModel):
    """A whole script file; a bare list of steps is shorthand for `{each: [...]}`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    repeat_last: bool = False
    sessions: dict[str, list[StepInput]] = Field(
        default_factory=dict[str, list[StepInput]],
        description="Steps bound to an X-Star-Harness-Session id.",
    )
    next: list[list[StepInput]] = Field(
        default_factory=list[list[StepInput]],
        description="Scripts claimed, oldest first, by conversations not seen before.",
    )
    each: list[StepInput] | None = Field(
        None, description="Steps every other new conversation gets a copy of."
    )


class ScriptFileError(ValueError):
    """A script file cannot be read; the message names the file and the problem."""


def parse_script(data: Any, source: str = "script") -> ScriptFile:
    """Validate decoded script data (a list of steps or a mapping)."""
    mapping: Any = {"each": cast(list[Any], data)} if isinstance(data, list) else data
    try:
        return ScriptFile.model_validate(mapping)
    except ValidationError as exc:
        raise ScriptFileError(f"{source}: invalid mock LLM script:\n{exc}") from None


def load_script_file(path: Path) -> ScriptFile:
    """Read a `.yaml`/`.yml` or `.json` script file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptFileError(f"{path}: cannot read: {exc}") from None
    kind = "JSON" if path.suffix == ".json" else "YAML"
    try:
        data: Any = json.loads(text) if kind == "JSON" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ScriptFileError(f"{path}: not valid {kind}: {exc}") from None
    return parse_script(data, str(path))
