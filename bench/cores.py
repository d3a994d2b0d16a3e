"""Pinning bench processes to cores, chosen from the cores the bench started with.

A process's affinity is inherited: once the first process pins itself to core 0, a child that
picks "core 1 of the cores I may use" would land on core 0 as well. The first call records the
starting set in the environment, which spawned children inherit, so every process picks from it.
"""

from __future__ import annotations

import os

_CORES_ENV = "STAR_HARNESS_BENCH_CORES"


def pin(index: int) -> None:
    """Keep this process on core `index` (modulo the cores available)."""
    listed = os.environ.get(_CORES_ENV)
    if listed is None:
        listed = ",".join(str(core) for core in sorted(os.sched_getaffinity(0)))
        os.environ[_CORES_ENV] = listed
    cores = [int(core) for core in listed.split(",")]
    os.sched_setaffinity(0, {cores[index % len(cores)]})
