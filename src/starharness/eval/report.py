"""The eval report: scored turns per scenario, a summary per rule, and its JSON form."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Final

from .audit import WorldCheck
from .evidence import Frame, Tokens, TurnEvidence
from .rules import RULES, score
from .verdict import Verdict

REPORT_VERSION: Final = 1


@dataclass(frozen=True, slots=True)
class Target:
    """Which model was evaluated (as the command line named it)."""

    provider: str
    model: str | None = None
    base_url: str | None = None

    def label(self) -> str:
        return f"{self.provider} / {self.model or 'default model'}"


@dataclass(slots=True)
class ScoredTurn:
    """One turn as the report shows it."""

    index: int
    said: str
    npc: str
    """The NPC's name as `encounter.opened` gave it (blank when unknown): the rules that judge
    its name read this one."""
    lines: list[str]
    options: list[Frame]
    actions: list[Frame]
    errors: list[Frame]
    first_delta_s: float | None
    turn_s: float
    tokens: Tokens
    quirks: list[str]
    verdicts: dict[str, Verdict]

    @classmethod
    def of(cls, evidence: TurnEvidence) -> ScoredTurn:
        player = evidence.player
        options = player.of_type("options")
        model = evidence.model
        return cls(
            index=evidence.index,
            said=player.said,
            npc=evidence.npc_name,
            lines=player.lines(),
            options=list(options[-1].get("items") or []) if options else [],
            actions=player.of_type("action"),
            errors=player.of_type("error"),
            first_delta_s=player.first_delta_s,
            turn_s=player.turn_s,
            tokens=model.tokens if model is not None else Tokens(estimated=True),
            quirks=sorted(set(model.quirks)) if model is not None else [],
            verdicts=score(evidence),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "said": self.said,
            "npc": self.npc,
            "lines": self.lines,
            "options": self.options,
            "actions": self.actions,
            "errors": self.errors,
            "first_delta_s": _round(self.first_delta_s),
            "turn_s": _round(self.turn_s),
            "tokens": _tokens_json(self.tokens),
            "quirks": self.quirks,
            "rules": {
                name: {"passed": verdict.passed, "detail": verdict.detail}
                for name, verdict in self.verdicts.items()
            },
        }


@dataclass(slots=True)
class ScenarioReport:
    name: str
    description: str
    turns: list[ScoredTurn] = field(default_factory=list[ScoredTurn])
    world: WorldCheck | None = None
    error: str | None = None
    """Why the scenario stopped early (a turn that never ended, a server that failed)."""
    expected: str | None = None
    """The outcome the scenario declares (None: it declares none)."""
    outcome: Verdict | None = None
    """Whether the audit shows it: task success."""
    refusal_then: bool = False
    """The outcome is a refusal followed by the hinted alternative."""

    def to_json(self) -> dict[str, Any]:
        world = self.world
        return {
            "name": self.name,
            "description": self.description,
            "error": self.error,
            "expected": self.expected,
            "outcome": None
            if self.outcome is None
            else {"passed": self.outcome.passed, "detail": self.outcome.detail},
            "world": None
            if world is None
            else {
                "ok": world.ok,
                "negative_balances": world.negative_balances,
                "negative_cargo": world.negative_cargo,
                "audit_rows": world.audit_rows,
                "committed_rows": world.committed_rows,
            },
            "turns": [turn.to_json() for turn in self.turns],
        }


@dataclass(frozen=True, slots=True)
class RuleSummary:
    passed: int
    applicable: int

    @property
    def share(self) -> float | None:
        return self.passed / self.applicable if self.applicable else None


@dataclass(slots=True)
class EvalReport:
    """Everything one `star-harness eval` run measured; comparable across models."""

    target: Target
    game: str
    started_at: str
    duration_s: float = 0.0
    scenarios: list[ScenarioReport] = field(default_factory=list[ScenarioReport])

    def turns(self) -> list[ScoredTurn]:
        return [turn for scenario in self.scenarios for turn in scenario.turns]

    def task_success(self) -> RuleSummary:
        """Scenarios whose declared outcome the audit shows, of those that declare one."""
        judged = [s.outcome for s in self.scenarios if s.outcome is not None]
        return RuleSummary(sum(1 for v in judged if v.passed), len(judged))

    def refusal_alternatives(self) -> RuleSummary:
        """Of the scenarios expecting a refusal then the hinted alternative, those that got it."""
        judged = [s.outcome for s in self.scenarios if s.outcome is not None and s.refusal_then]
        return RuleSummary(sum(1 for v in judged if v.passed), len(judged))

    def failed_turns(self, rule: str) -> int:
        """How many turns failed `rule` (commits without acceptance, claims without a commit)."""
        return sum(1 for turn in self.turns() if turn.verdicts[rule].passed is False)

    def rule_summary(self) -> dict[str, RuleSummary]:
        summary: dict[str, RuleSummary] = {}
        turns = self.turns()
        for name in RULES:
            verdicts = [t.verdicts[name].passed for t in turns if name in t.verdicts]
            applicable = [v for v in verdicts if v is not None]
            summary[name] = RuleSummary(sum(1 for v in applicable if v), len(applicable))
        return summary

    def numbers(self) -> dict[str, Any]:
        """Latency, tokens per turn and cache-hit share over every turn."""
        turns = self.turns()
        first = [t.first_delta_s for t in turns if t.first_delta_s is not None]
        whole = [t.turn_s for t in turns]
        output = [t.tokens.output for t in turns]
        total_input = sum(t.tokens.input for t in turns)
        cached = sum(t.tokens.cache_read for t in turns)
        return {
            "turns": len(turns),
            "first_delta_s": _stats(first),
            "turn_s": _stats(whole),
            "tokens_per_turn": {
                "input": _round(total_input / len(turns)) if turns else None,
                "output": _round(sum(output) / len(turns)) if turns else None,
                "estimated": any(t.tokens.estimated for t in turns),
            },
            "cache_hit_share": _round(cached / total_input) if total_input else None,
        }

    def to_json(self) -> dict[str, Any]:
        rules = self.rule_summary()
        return {
            "version": REPORT_VERSION,
            "target": {
                "provider": self.target.provider,
                "model": self.target.model,
                "base_url": self.target.base_url,
            },
            "game": self.game,
            "started_at": self.started_at,
            "duration_s": _round(self.duration_s),
            "summary": {
                "rules": {
                    name: {"passed": s.passed, "applicable": s.applicable, "share": _round(s.share)}
                    for name, s in rules.items()
                },
                **self.numbers(),
                "task_success": {
                    "model": self.target.label(),
                    "passed": self.task_success().passed,
                    "scenarios": self.task_success().applicable,
                    "share": _round(self.task_success().share),
                },
                "refusal_then_alternative": {
                    "passed": self.refusal_alternatives().passed,
                    "scenarios": self.refusal_alternatives().applicable,
                    "share": _round(self.refusal_alternatives().share),
                },
                "turns_committing_unaccepted": self.failed_turns("only_accepted_commits"),
                "turns_claiming_without_commit": self.failed_turns("no_false_claims"),
                "world_ok": all(s.world.ok for s in self.scenarios if s.world is not None),
                "scenarios_stopped": [s.name for s in self.scenarios if s.error is not None],
            },
            "scenarios": [scenario.to_json() for scenario in self.scenarios],
        }


def _stats(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"median": None, "max": None}
    return {"median": _round(statistics.median(values)), "max": _round(max(values))}


def _tokens_json(tokens: Tokens) -> dict[str, Any]:
    return {
        "input": tokens.input,
        "output": tokens.output,
        "cache_read": tokens.cache_read,
        "estimated": tokens.estimated,
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
