"""Root conftest: puts `tests/` on sys.path so shared support modules import by name."""

import os

# Model-visible implies logged: every request is checked against the one rebuilt from the whole
# log before it is sent (runtime/loop/view_log.py).
os.environ.setdefault("STAR_HARNESS_VERIFY_VIEW", "rebuild")
