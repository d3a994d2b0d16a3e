"""Which project settings an agent may write, and what values it may write there."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Final

from ...runtime.errors import StarHarnessError

MAX_KEY_CHARS: Final = 256
MAX_CONTAINER_ITEMS: Final = 64
MAX_VALUE_DEPTH: Final = 2

# Settings that load code, change input, silence diagnostics or re-point trust anchors.
DENIED_PREFIXES: Final = (
    "autoload/",
    "input/",
    "debug/file_logging/",
    "debug/settings/stdout/verbose_stdout",
    "debug/settings/stdout/print_fps",
    "debug/gdscript/warnings/",
    "debug/shapes/",
    "debug/colors/",
    "network/tls/certificate_bundle_override",
    "project_settings_override/",
    "editor_plugins/enabled",
)
DENIED_KEYS: Final = frozenset(
    {
        "editor_plugins/enabled",
        "debug/settings/stdout/print_fps",
        "debug/settings/stdout/verbose_stdout",
        "network/tls/certificate_bundle_override",
    }
)

_KEY_PATTERN: Final = re.compile(r"^[a-zA-Z](?:[a-zA-Z0-9_/]*[a-zA-Z0-9])?$")


class SettingRuleError(StarHarnessError, ValueError):
    """A project-setting key or value that breaks the rules; the message says which rule."""


def normalize_setting_key(key: object) -> str:
    """Trim and check a setting key's shape (not the deny list); raise SettingRuleError."""
    if not isinstance(key, str):
        raise SettingRuleError("setting key must be a string such as 'application/config/name'")
    trimmed = key.strip()
    if not trimmed:
        raise SettingRuleError("setting key must not be empty")
    if len(trimmed) > MAX_KEY_CHARS:
        raise SettingRuleError(f"setting key is {len(trimmed)} characters; at most {MAX_KEY_CHARS}")
    if _KEY_PATTERN.fullmatch(trimmed) is None:
        raise SettingRuleError(
            f"setting key {trimmed!r} must start with a letter, contain only letters, digits, "
            "'_' and '/', and end with a letter or digit"
        )
    return trimmed


def denied_rule(key: str) -> str | None:
    """The deny-list entry that forbids writing `key`, or None when writing is allowed."""
    folded = key.casefold()
    if folded in DENIED_KEYS:
        return folded
    for prefix in DENIED_PREFIXES:
        if folded.startswith(prefix) or folded == prefix.rstrip("/"):
            return prefix
    return None


def check_writable_key(key: object) -> str:
    """A normalized key that may be written; raise SettingRuleError naming the rule otherwise."""
    normalized = normalize_setting_key(key)
    rule = denied_rule(normalized)
    if rule is not None:
        raise SettingRuleError(
            f"project setting {normalized!r} is protected by the deny rule {rule!r} "
            "(it loads code, changes input or hides diagnostics); change it in the Godot "
            "editor by hand if it is really needed"
        )
    return normalized


def check_setting_value(value: object) -> None:
    """Raise SettingRuleError unless `value` is a plain, small JSON value."""
    _check_value(value, 0)


def _check_value(value: object, depth: int) -> None:
    if value is None:
        raise SettingRuleError("setting value must not be null")
    if isinstance(value, bool | int | str):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SettingRuleError("setting value must be a finite number")
        return
    if isinstance(value, list | tuple | Mapping):
        if depth >= MAX_VALUE_DEPTH:
            raise SettingRuleError(
                f"setting value nests arrays/objects deeper than {MAX_VALUE_DEPTH} levels"
            )
        _check_container(value, depth)  # pyright: ignore[reportUnknownArgumentType]
        return
    raise SettingRuleError(f"setting value of type {type(value).__name__} is not allowed")


def _check_container(
    value: list[object] | tuple[object, ...] | Mapping[object, object], depth: int
) -> None:
    if len(value) > MAX_CONTAINER_ITEMS:
        raise SettingRuleError(
            f"setting value has {len(value)} items; arrays and objects hold at most "
            f"{MAX_CONTAINER_ITEMS}"
        )
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise SettingRuleError("setting value objects need string keys")
            _check_value(item, depth + 1)
        return
    for item in value:
        _check_value(item, depth + 1)
