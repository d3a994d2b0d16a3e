"""What one NPC turn left behind: the frames the player saw, the transcript, the audit rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Frame = dict[str, Any]


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One row of the world's audit table (every attempted action, ok or refused)."""

    id: int
    action: str
    ok: bool
    reason: str | None
    summary: str | None
    arguments: dict[str, Any] = field(default_factory=dict[str, Any])
    """The action's arguments as audited (bound ones included)."""


@dataclass(frozen=True, slots=True)
class RefusalFollowUp:
    """An action the world refused, and the next line the NPC spoke after reading it."""

    action: str
    reason: str
    hint: str
    next_line: str | None


@dataclass(frozen=True, slots=True)
class Tokens:
    """Token counts of one turn; `estimated` when the server reported none (streamed chunks)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    estimated: bool = False

    @property
    def total(self) -> int:
        return self.input + self.output


@dataclass(slots=True)
class ModelTurn:
    """The NPC agent's side of one turn, read from its session log."""

    started_ms: int
    speech_lines: list[str] = field(default_factory=list[str])
    """Lines spoken through the speech action, in order."""
    plain_text: list[str] = field(default_factory=list[str])
    """Text the model wrote outside any action (the player hears it as a fallback)."""
    tool_calls: list[str] = field(default_factory=list[str])
    refusals: list[RefusalFollowUp] = field(default_factory=list[RefusalFollowUp])
    tokens: Tokens = field(default_factory=Tokens)
    quirks: list[str] = field(default_factory=list[str])
    """How provider quirks changed its requests (forced-tool, unstreamed)."""
    end_reason: str = ""
    grounding: list[str] = field(default_factory=list[str])
    """What the model was told this turn (the scene, tool results, the player's words) and
    the arguments of its own action calls: a number the NPC says should come from here."""


@dataclass(slots=True)
class PlayerTurn:
    """One player step answered by an NPC turn, as the player's client saw it."""

    step: int
    said: str
    frames: list[Frame] = field(default_factory=list[Frame])
    invalid_frames: list[str] = field(default_factory=list[str])
    """Why each frame that failed the game's frame schema failed."""
    sent_ms: int = 0
    first_delta_s: float | None = None
    turn_s: float = 0.0
    ended_idle: bool = False
    opened: bool = False
    """The player walked up (`encounter.open`): the NPC's greeting, the player agreed to
    nothing."""
    picked: str | None = None
    """The option id the player picked (`encounter.say` with `optionId`), if any."""

    def of_type(self, kind: str) -> list[Frame]:
        return [frame for frame in self.frames if frame.get("t") == kind]

    def lines(self) -> list[str]:
        """The NPC's lines as heard: say.delta text joined up to each say.end."""
        lines: list[str] = []
        current: list[str] = []
        for frame in self.frames:
            kind = frame.get("t")
            if kind == "say.delta":
                current.append(str(frame.get("text", "")))
            elif kind == "say.end":
                lines.append("".join(current))
                current = []
        if current:
            lines.append("".join(current))
        return lines

    def offers(self) -> list[Frame]:
        """The offer items of this turn's `options` frames (items carrying an `offer`)."""
        found: list[Frame] = []
        for frame in self.of_type("options"):
            items: list[Frame] = list(frame.get("items") or [])
            found.extend(item for item in items if item.get("offer"))
        return found


@dataclass(slots=True)
class TurnEvidence:
    """Everything the rules look at for one turn."""

    scenario: str
    index: int
    player: PlayerTurn
    model: ModelTurn | None
    committed: list[AuditRow]
    """Audit rows that committed (ok) during the turn."""
    refused: list[AuditRow]
    max_options: int
    audit_available: bool = True
    min_options: int = 0
    """The fewest options the game's speech contract asks for."""
    npc_name: str = ""
    """The NPC's name as `encounter.opened` gave it (blank when unknown)."""
    takes_from_player: frozenset[str] = frozenset()
    """Actions that take from the player: they may commit only as an offer the player
    accepted (the game's or the scenario file's list)."""
    offers_shown: frozenset[str] = frozenset()
    """Offer option ids the player was shown in this encounter before this turn."""
    accepted_before: frozenset[str] = frozenset()
    """Offer ids that committed earlier in this encounter."""
    previous_lines: tuple[str, ...] = ()
    """The NPC's lines on the last turn it spoke in this encounter."""
