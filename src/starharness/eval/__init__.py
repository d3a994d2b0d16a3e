"""`star-harness eval`: scripted players against a game, each NPC turn scored for discipline."""

from .audit import AuditReader, WorldCheck
from .evidence import (
    AuditRow,
    Frame,
    ModelTurn,
    PlayerTurn,
    RefusalFollowUp,
    Tokens,
    TurnEvidence,
)
from .player import ScriptedPlayer, TurnTimeoutError, scripted_player
from .render import print_report
from .report import EvalReport, RuleSummary, ScenarioReport, ScoredTurn, Target
from .rules import RULES, Rule, Verdict, score
from .runner import EvalSettings, build_profile, run_eval
from .scenarios import (
    DEFAULT_GAME,
    Scenario,
    ScenarioFileError,
    ScenarioSet,
    Step,
    default_scenarios,
    load_scenarios,
)
from .transcript import model_turns

__all__ = [
    "DEFAULT_GAME",
    "RULES",
    "AuditReader",
    "AuditRow",
    "EvalReport",
    "EvalSettings",
    "Frame",
    "ModelTurn",
    "PlayerTurn",
    "RefusalFollowUp",
    "Rule",
    "RuleSummary",
    "Scenario",
    "ScenarioFileError",
    "ScenarioReport",
    "ScenarioSet",
    "ScoredTurn",
    "ScriptedPlayer",
    "Step",
    "Target",
    "Tokens",
    "TurnEvidence",
    "TurnTimeoutError",
    "Verdict",
    "WorldCheck",
    "build_profile",
    "default_scenarios",
    "load_scenarios",
    "model_turns",
    "print_report",
    "run_eval",
    "score",
    "scripted_player",
]
