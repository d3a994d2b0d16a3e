"""Root conftest: puts `tests/` on sys.path so shared support modules import by name."""

import os

from hypothesis import HealthCheck, settings

# `pg_target`: a fresh PostgreSQL database per test (skips without a server; fails under CI);
# `store_place`: a session store test on SQLite and on PostgreSQL.
pytest_plugins = ["pg_support", "store_support"]

# Model-visible implies logged: every request is checked against the one rebuilt from the whole
# log before it is sent (runtime/loop/view_log.py).
os.environ.setdefault("STAR_HARNESS_VERIFY_VIEW", "rebuild")


# No timing asserts in tests (the machines are shared and noisy): hypothesis's per-example
# deadline and its too-slow health check are timing checks, so both are off everywhere.
settings.register_profile(
    "star-harness", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("star-harness")
