"""Run by test_context_crash.py in a process of its own, which the test kills with SIGKILL.

argv: base_url home db mode; mode is `compaction` (turn 2 overflows and compacts) or
`delegate` (turn 2 delegates to a subagent).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1])]

from context_support import SPILL_ROW, compaction_row, context_runtime  # noqa: E402

from starharness.runtime.loop import AGENTS  # noqa: E402

DELEGATE_ROW = {
    "id": "delegate",
    "plugin": "starharness.runtime.context:DelegatePlugin",
    "config": {"tools": []},
}


async def main(base_url: str, home: Path, db: Path, mode: str) -> None:
    rows = [SPILL_ROW, compaction_row(), DELEGATE_ROW]
    async with context_runtime(base_url, home, rows, store="sqlite", path=db) as rt:
        handle = await rt.ctx.get(AGENTS).create(f"crash-{mode}")
        for text in ("hello " * 30, "go on"):
            handle.agent.followup(text)
            await handle.agent.when_idle()
        print("finished without being killed", flush=True)


if __name__ == "__main__":
    url, home_dir, db_path, run_mode = sys.argv[1:5]
    asyncio.run(main(url, Path(home_dir), Path(db_path), run_mode))
