"""The resolved tree of a profile as plain data and YAML (what `config --dump` prints)."""

from __future__ import annotations

import re
from typing import Any, cast

import yaml

from .profile import ResolvedProfile

# Config only ever names credential variables; this is a second line of defence should a
# plugin's config still hold a value under a secret-looking key.
_SECRET_KEY = re.compile(r"(?:^|_)(?:api_key|token|secret|password)$", re.IGNORECASE)
REDACTED = "<redacted>"


def profile_tree(profile: ResolvedProfile) -> dict[str, Any]:
    """The profile as JSON-able data: source, applied patches and rows with full configs."""
    rows: list[dict[str, Any]] = []
    for row in profile.rows:
        entry: dict[str, Any] = {"id": row.id, "plugin": row.plugin, "bundle": row.bundle}
        if row.patched_by:
            entry["patched_by"] = list(row.patched_by)
        entry["config"] = _redact(row.config.model_dump(mode="json"))
        rows.append(entry)
    return {
        "profile": profile.name,
        "source": profile.source,
        "patches": list(profile.patches),
        "rows": rows,
    }


def dump_profile(profile: ResolvedProfile) -> str:
    """`profile_tree` as YAML, in row order."""
    return yaml.safe_dump(profile_tree(profile), sort_keys=False, allow_unicode=True)


def _redact(value: Any) -> Any:
    if isinstance(value, dict):
        items = cast(dict[str, Any], value)
        return {
            key: REDACTED
            if isinstance(item, str) and item and _SECRET_KEY.search(key)
            else _redact(item)
            for key, item in items.items()
        }
    if isinstance(value, list):
        return [_redact(item) for item in cast(list[Any], value)]
    return value
