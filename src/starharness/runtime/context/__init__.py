"""Context management: workspace instructions and other context providers, spill of big tool
results, compaction of long histories, forks and delegation, goals and plans."""

from . import events
from .compaction import CompactionPlugin
from .compaction_config import CompactionConfig, ProviderThresholds, PruneConfig
from .compaction_recovery import recover_compaction
from .compactor import Compactor
from .spill import READ_TOOL, SpillConfig, SpillPlugin, spilled_content
from .tokens import estimate_tokens

__all__ = [
    "READ_TOOL",
    "CompactionConfig",
    "CompactionPlugin",
    "Compactor",
    "ProviderThresholds",
    "PruneConfig",
    "SpillConfig",
    "SpillPlugin",
    "estimate_tokens",
    "events",
    "recover_compaction",
    "spilled_content",
]
