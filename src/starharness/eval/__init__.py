"""`star-harness eval`: scripted players against a game, each NPC turn scored for discipline."""

from .audit import (
    AuditReader,
)
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
from .report import (
    EvalReport,
    Target,
)
from .rules import (
    RULES,
    Rule,
    score,
)
from .runner import (
    EvalSettings,
    needing_consent,
    run_eval,
)
from .scenarios import (
    Scenario,
    ScenarioFileError,
    Step,
    default_scenarios,
    load_scenarios,
)
from .transcript import model_turns

__all__ = [
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
    "Scenario",
    "ScenarioFileError",
    "ScriptedPlayer",
    "Step",
    "Target",
    "Tokens",
    "TurnEvidence",
    "TurnTimeoutError",
    "default_scenarios",
    "load_scenarios",
    "model_turns",
    "needing_consent",
    "print_report",
    "run_eval",
    "score",
    "scripted_player",
]
