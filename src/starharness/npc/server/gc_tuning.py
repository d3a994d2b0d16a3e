"""Process-wide garbage-collector tuning for a long-running server."""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000
"""Allocations between young collections (CPython's default is 700)."""


def tune_gc_for_serving() -> None:
    """Freeze what is alive now and collect the young generation less often; call once, warm.

    What a server builds at startup (modules, the app, schemas, the world) lives as long as the
    process; frozen, full collections no longer rescan it. At CPython's default threshold a
    young collection ran every third of a turn and promoted the objects of every turn in
    flight, which then triggered full collections over every open encounter (a quarter of a
    second with 1,000 open, bench/encounters.py). Collecting less often promotes far fewer.
    """
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
