"""The per-method timeout ladder and the numeric clamps it shares with the tool parameters."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

BASE_TIMEOUT_MS: Final = 8_000
SLOW_FACTOR: Final = 4

RUN_WAIT_DEFAULT_MS: Final = 3_000
RUN_WAIT_MAX_MS: Final = 15_000

IMPORT_WAIT_DEFAULT_MS: Final = 30_000
IMPORT_WAIT_MAX_MS: Final = 60_000

# The addon kills its export subprocess at 300 s, so the bridge waits a little longer to hear
# the addon's own answer instead of a bare timeout.
EXPORT_TIMEOUT_MS: Final = 300_000
EXPORT_GRACE_MS: Final = 15_000

SCENE_TREE_DEFAULT_DEPTH: Final = 8
SCENE_TREE_MIN_DEPTH: Final = 1
SCENE_TREE_MAX_DEPTH: Final = 16

LIST_DEFAULT_LIMIT: Final = 500
LIST_MIN_LIMIT: Final = 1
LIST_MAX_LIMIT: Final = 5_000

RUN_METHODS: Final = frozenset({"run_current_scene", "play_main_scene"})

# Methods that walk the project or spawn subprocesses in the editor.
SLOW_METHODS: Final = frozenset(
    {
        "import_resources",
        "find_unused_resources",
        "lint_scripts",
        "list_project_files",
        "inspect_script",
        "find_class_name_conflicts",
    }
)


def clamp_int(value: object, *, default: int, low: int, high: int) -> int:
    """Floor a finite number into [low, high]; anything that is not a number gives `default`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    if isinstance(value, float) and not math.isfinite(value):
        return default
    return max(low, min(high, math.floor(value)))


def clamp_run_wait_ms(value: object) -> int:
    """How long a run waits for early play errors: 0..15,000 ms, 3,000 by default."""
    return clamp_int(value, default=RUN_WAIT_DEFAULT_MS, low=0, high=RUN_WAIT_MAX_MS)


def clamp_import_wait_ms(value: object) -> int:
    """How long `wait_for_import_done` polls: 0..60,000 ms, 30,000 by default."""
    return clamp_int(value, default=IMPORT_WAIT_DEFAULT_MS, low=0, high=IMPORT_WAIT_MAX_MS)


def clamp_scene_tree_depth(value: object) -> int:
    """Scene-tree depth: 1..16, 8 by default."""
    return clamp_int(
        value,
        default=SCENE_TREE_DEFAULT_DEPTH,
        low=SCENE_TREE_MIN_DEPTH,
        high=SCENE_TREE_MAX_DEPTH,
    )


def clamp_list_limit(value: object) -> int:
    """Page size of `list_project_files`: 1..5,000, 500 by default."""
    return clamp_int(value, default=LIST_DEFAULT_LIMIT, low=LIST_MIN_LIMIT, high=LIST_MAX_LIMIT)


def timeout_ms(method: str, params: Mapping[str, object]) -> int:
    """Milliseconds the bridge waits for the editor's answer to `method` with `params`."""
    if method in RUN_METHODS:
        return clamp_run_wait_ms(params.get("wait_ms")) + BASE_TIMEOUT_MS
    if method == "export_project":
        return EXPORT_TIMEOUT_MS + EXPORT_GRACE_MS
    if method == "wait_for_import_done":
        return clamp_import_wait_ms(params.get("timeout_ms")) + BASE_TIMEOUT_MS
    if method in SLOW_METHODS:
        return BASE_TIMEOUT_MS * SLOW_FACTOR
    return BASE_TIMEOUT_MS
