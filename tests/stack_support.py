"""Building a runtime for a test: a built-in profile, patched, started through `start`.

Every test runtime is made by `start_test_runtime` (the `make_runtime` fixture,
`loop_support.runtime_for`, `context_support.context_runtime`, the sandbox's session-log tests,
and `start_runtime` for the game-server and protocol tests), so each goes through profile loading
and the start-time checks the real commands go through. The Godot plugin's tests alone set up
plugins by hand, to drive the bridge plugin on its own. `tests/` is on sys.path through the root
conftest.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from starharness.composition import profile_search_path
from starharness.runtime.config import Patch, ResolvedProfile, Runtime, load_profile, start
from starharness.runtime.kernel import Context
from starharness.runtime.llm import LlmConfig, RetryConfig, TimeoutsConfig
from starharness.runtime.session import SessionsConfig

PatchSource = str | Path | Patch


@cache
def _empty_home() -> Path:
    """A home with no user patch, so a developer's own patch.yml never reaches a test."""
    home = Path(tempfile.mkdtemp(prefix="star-harness-test-home-"))
    # Without this every test run left one empty folder in the temporary directory.
    atexit.register(shutil.rmtree, home, ignore_errors=True)
    return home


def resolve_test_profile(
    patches: Sequence[PatchSource] = (), *, profile: str = "task", home: Path | None = None
) -> ResolvedProfile:
    """A built-in profile with `patches` applied (and no user patch unless `home` has one)."""
    where = home if home is not None else _empty_home()
    # Sessions in memory unless a patch says otherwise: the default file is the user's.
    memory = Patch.of(
        "test: sessions in memory", [{"id": "sessions", "merge": {"store": "memory"}}]
    )
    chosen = [memory, *patches]
    return load_profile(profile, chosen, search=profile_search_path(where), home=where)


async def start_test_runtime(
    patches: Sequence[PatchSource] = (), *, profile: str = "task", home: Path | None = None
) -> Runtime:
    """`resolve_test_profile(...)` started; the caller closes it (`async with` or `aclose`)."""
    return await start(resolve_test_profile(patches, profile=profile, home=home))


def scripted_llm(steps: Sequence[Any], **config: Any) -> Patch:
    """Replace the llm row with an in-process ScriptedProvider playing the mock's `steps`."""
    plain = [s.model_dump(mode="json") if hasattr(s, "model_dump") else dict(s) for s in steps]
    row = {
        "id": "llm",
        "plugin": "starharness.runtime.testing:ScriptedLlmPlugin",
        "config": {"steps": plain, **config},
    }
    return Patch.of("test: scripted llm", [row])


async def start_runtime(
    base_url: str,
    *,
    sessions: SessionsConfig | None = None,
    max_attempts: int = 2,
    first_byte_s: float = 10.0,
    provider: str = "openai-compatible",
    rows: Sequence[dict[str, Any]] = (),
) -> Context:
    """The runtime rows a game server needs, with the LLM pointed at `base_url`.

    The `task` profile without its telemetry and approvals rows: sessions, llm, tools, prompt
    and agents, plus `rows` (patch rows). Dispose the returned root context to stop it.
    """
    llm = LlmConfig(
        provider=provider,
        base_url=base_url,
        model="mock-model",
        retry=RetryConfig(max_attempts=max_attempts, base_delay_s=0.0, jitter=0.0),
        timeouts=TimeoutsConfig(first_byte_s=first_byte_s, idle_s=first_byte_s),
    )
    sessions_config = sessions or SessionsConfig(store="memory")
    patch = Patch.of(
        "test: game server rows",
        [
            {"id": "telemetry", "remove": True},
            {"id": "approvals", "remove": True},
            {"id": "sessions", "config": sessions_config.model_dump(mode="json")},
            {"id": "llm", "config": llm.model_dump(mode="json")},
            *rows,
        ],
    )
    runtime = await start_test_runtime([patch])
    return runtime.ctx
