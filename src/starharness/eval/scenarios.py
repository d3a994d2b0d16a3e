"""Scripted players: what each scenario says and picks, loaded from a YAML or JSON file."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Self

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..runtime.errors import UserFacingError
from .outcomes import Outcome

DEFAULT_GAME = "starharness.voyage:GAME"


PositiveInt = Annotated[int, Field(ge=1)]
NonBlank = Annotated[str, Field(min_length=1, pattern=r"\S")]


class ScenarioFileError(UserFacingError, ValueError):
    """A scenario file cannot be read; the message names the file and what is wrong."""


class Step(BaseModel):
    """One thing the player does: open an encounter, say a line, pick an option, accept an
    offer, or leave."""

    model_config = ConfigDict(extra="forbid")

    open: str | None = Field(default=None, min_length=1)
    """Walk up to this NPC (a new encounter; the NPC may greet first)."""
    say: str | None = Field(default=None, min_length=1)
    pick: PositiveInt | NonBlank | None = None
    """Pick the n-th option of the last `options` frame (1 is the first), or the first whose
    label contains this text (any case)."""
    accept: bool | NonBlank = False
    """Pick the first offer of the last `options` frame (an item carrying an `offer`), or the
    first offer of the action named here."""
    otherwise: str | None = Field(default=None, min_length=1)
    """Said instead when there is no option `pick` to pick, or no offer to `accept`."""
    close: bool = False

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        chosen = [
            name
            for name, value in (
                ("open", self.open),
                ("say", self.say),
                ("pick", self.pick),
                ("accept", self.accept if self.accept is not False else None),
                ("close", self.close or None),
            )
            if value is not None
        ]
        if len(chosen) != 1:
            raise ValueError(
                "a step does exactly one of open, say, pick, accept or close "
                f"(got {', '.join(chosen) or 'none'})"
            )
        if self.otherwise is not None and self.pick is None and self.accept is False:
            raise ValueError("'otherwise' belongs to a pick or accept step")
        return self

    @property
    def starts_turn(self) -> bool:
        """Whether the harness answers this step with an NPC turn (open greets first)."""
        return not self.close


class Scenario(BaseModel):
    """A named, scripted visit; every scenario starts on a fresh world."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9-]*$")
    description: str = ""
    player: str = Field(min_length=1)
    steps: list[Step] = Field(min_length=1)
    expect: Outcome | None = None
    """What a good NPC achieves, judged from the audit table (task success)."""

    @model_validator(mode="after")
    def _opens_first(self) -> Self:
        if self.steps[0].open is None:
            raise ValueError("the first step must open an encounter")
        return self


class ScenarioSet(BaseModel):
    """A scenario file: the game to play and its scenarios."""

    model_config = ConfigDict(extra="forbid")

    game: str = DEFAULT_GAME
    takes_from_player: list[str] = Field(default_factory=list[str])
    """Actions judged as taking from the player (they may commit only as an offer the player
    accepted), besides those the game declares `takes_from=Role.PLAYER`."""
    scenarios: list[Scenario] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_names(self) -> Self:
        seen: set[str] = set()
        for scenario in self.scenarios:
            if scenario.name in seen:
                raise ValueError(f"two scenarios are named {scenario.name!r}")
            seen.add(scenario.name)
        return self

    def only(self, names: list[str]) -> ScenarioSet:
        """The scenarios called `names` (all when empty); ScenarioFileError names unknown ones."""
        if not names:
            return self
        known = {s.name for s in self.scenarios}
        unknown = [name for name in names if name not in known]
        if unknown:
            raise ScenarioFileError(
                f"unknown scenario {', '.join(map(repr, unknown))} (known: {', '.join(known)})"
            )
        return ScenarioSet(
            game=self.game,
            takes_from_player=self.takes_from_player,
            scenarios=[s for s in self.scenarios if s.name in names],
        )


def default_scenarios() -> Path:
    """The scenarios shipped with the sample game (a file inside the installed package)."""
    return Path(str(files("starharness.voyage").joinpath("scenarios", "omega.yml")))


def load_scenarios(path: Path) -> ScenarioSet:
    """Read and check a scenario file (.yml/.yaml or .json); raises ScenarioFileError."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        raw: object = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise ScenarioFileError(f"{path} is not valid {_kind(path)}: {_first_line(exc)}") from None
    try:
        return ScenarioSet.model_validate(raw)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"]) or "the file"
        raise ScenarioFileError(f"{path}: {where}: {problem['msg']}") from None


def _kind(path: Path) -> str:
    return "JSON" if path.suffix == ".json" else "YAML"


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
