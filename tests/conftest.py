"""Root conftest: puts `tests/` on sys.path so shared support modules import by name."""

import os

# `pg_target`: a fresh PostgreSQL database per test (skips without a server; fails under CI);
# `store_place`: a session store test on SQLite and on PostgreSQL.
pytest_plugins = ["pg_support", "store_support"]

# Model-visible implies logged: every request is checked against the one rebuilt from the whole
# log before it is sent (runtime/loop/view_log.py).
os.environ.setdefault("STAR_HARNESS_VERIFY_VIEW", "rebuild")
