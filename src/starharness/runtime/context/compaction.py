"""CompactionPlugin: shrinks an agent's view when it nears the context window, or when the
provider refused a request as too long; thresholds per provider (window from its profile)."""

from __future__ import annotations

from ..kernel import Context, Plugin
from ..loop import COMPACT
from ..session import SESSIONS
from .compaction_config import CompactionConfig
from .compaction_recovery import recover_compaction
from .compactor import Compactor


class CompactionPlugin(Plugin[CompactionConfig]):
    """Answers `agent/compact` (pressure, overflow) and closes compactions a crash cut short."""

    needs_agent_loop = True

    Config = CompactionConfig
    inject = (SESSIONS,)  # the model is the compacted agent's own (agent.llm)

    async def setup(self, ctx: Context, config: CompactionConfig) -> None:
        compactor = Compactor(config)
        ctx.on_hook(COMPACT, compactor.on_compact)
        ctx.scope.add(ctx.get(SESSIONS).add_recovery(recover_compaction))
