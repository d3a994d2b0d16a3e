"""tune_gc_for_serving, run in a fresh interpreter (it changes process-wide state)."""

from __future__ import annotations

import json
import subprocess
import sys

from starharness.npc.server.gc_tuning import YOUNG_THRESHOLD

_PROBE = """
import gc, json
from starharness.npc.server import tune_gc_for_serving
before = gc.get_threshold()
kept = [[i] for i in range(1000)]
tune_gc_for_serving()
print(json.dumps({"before": before, "after": gc.get_threshold(),
                  "frozen": gc.get_freeze_count()}))
"""


def test_startup_objects_are_frozen_and_young_collections_are_rarer() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    seen = json.loads(done.stdout)
    assert seen["before"][0] < YOUNG_THRESHOLD
    assert seen["after"] == [YOUNG_THRESHOLD, *seen["before"][1:]]
    assert seen["frozen"] >= 1000  # at least the lists made before the call
