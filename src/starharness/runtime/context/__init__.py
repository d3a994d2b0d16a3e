"""Context management: workspace instructions and other context providers, spill of big tool
results, compaction of long histories, forks and delegation, goals and plans."""

from . import events
from .compaction import CompactionPlugin
from .compaction_config import CompactionConfig, ProviderThresholds, PruneConfig
from .compaction_recovery import recover_compaction
from .compactor import Compactor, rebuild_summary_requests
from .delegate import (
    DelegateConfig,
    DelegatePlugin,
)
from .forks import (
    ForkError,
    completed_prefix,
    fork,
    verify_seed,
)
from .goals import (
    PlanItem,
    StaleRevisionError,
    WorkBook,
    render_plan,
)
from .goals_plugin import (
    GoalsConfig,
    GoalsPlugin,
)
from .instructions import AgentsMdConfig, AgentsMdPlugin, find_instructions, render_instructions
from .references import (
    SessionReferencesConfig,
    SessionReferencesPlugin,
)
from .spill import READ_TOOL, SpillConfig, SpillPlugin, spilled_content
from .time_context import TimeContextConfig, TimeContextPlugin

__all__ = [
    "READ_TOOL",
    "AgentsMdConfig",
    "AgentsMdPlugin",
    "CompactionConfig",
    "CompactionPlugin",
    "Compactor",
    "DelegateConfig",
    "DelegatePlugin",
    "ForkError",
    "GoalsConfig",
    "GoalsPlugin",
    "PlanItem",
    "ProviderThresholds",
    "PruneConfig",
    "SessionReferencesConfig",
    "SessionReferencesPlugin",
    "SpillConfig",
    "SpillPlugin",
    "StaleRevisionError",
    "TimeContextConfig",
    "TimeContextPlugin",
    "WorkBook",
    "completed_prefix",
    "events",
    "find_instructions",
    "fork",
    "rebuild_summary_requests",
    "recover_compaction",
    "render_instructions",
    "render_plan",
    "spilled_content",
    "verify_seed",
]
