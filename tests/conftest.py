"""Root conftest: puts `tests/` on sys.path so shared support modules import by name.

It also registers the mock LLM's pytest plugin (the `mock_llm` fixture) and the PostgreSQL
fixtures (`pg_target`: a fresh database per test, skipped without a server and failing under CI;
`store_place`: a session store test on SQLite and on PostgreSQL), and provides `make_runtime`,
the one way a test builds a runtime (see `stack_support`).
"""

from __future__ import annotations

import os

# Model-visible implies logged: every request is checked against the one rebuilt from the whole
# log before it is sent (runtime/loop/view_log.py).
os.environ.setdefault("STAR_HARNESS_VERIFY_VIEW", "rebuild")

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from stack_support import PatchSource, start_test_runtime
from starharness.runtime.config import Runtime

pytest_plugins = ("starharness.mockllm.pytest_plugin", "pg_support", "store_support")

# No timing asserts in tests (the machines are shared and noisy): hypothesis's per-example
# deadline and its too-slow health check are timing checks, so both are off everywhere.
settings.register_profile(
    "star-harness", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("star-harness")

MakeRuntime = Callable[..., AbstractAsyncContextManager[Runtime]]


@pytest.fixture
def make_runtime(tmp_path: Path) -> MakeRuntime:
    """`async with make_runtime(patch, ..., profile="task") as runtime:` a started runtime.

    Patches apply to the built-in profile in order (`stack_support.scripted_llm(steps)` puts an
    in-process ScriptedProvider in the llm row); the home is the test's tmp_path.
    """

    @asynccontextmanager
    async def make(
        *patches: PatchSource, profile: str = "task", home: Path | None = None
    ) -> AsyncIterator[Runtime]:
        where = home if home is not None else tmp_path
        chosen: Sequence[PatchSource] = patches
        async with await start_test_runtime(chosen, profile=profile, home=where) as runtime:
            yield runtime

    return make
