"""Finding a row's plugin class: an import path `package.module:Class` or an entry point name."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any, cast

from ..errors import StarHarnessError
from ..kernel import Plugin

ENTRY_POINT_GROUP = "star_harness.plugins"


class PluginNotFoundError(StarHarnessError, LookupError):
    """The plugin string names nothing loadable; the message says why (never a traceback)."""


def resolve_plugin(spec: str) -> type[Plugin[Any]]:
    """The Plugin subclass that `spec` names."""
    found = _from_import_path(spec) if ":" in spec else _from_entry_point(spec)
    kind = type(found).__name__
    if not isinstance(found, type):
        raise PluginNotFoundError(f"{spec!r} names a {kind}, not a Plugin subclass")
    if not issubclass(found, Plugin):
        raise PluginNotFoundError(f"{spec!r} names a class that is not a Plugin subclass")
    return cast(type[Plugin[Any]], found)


def _from_import_path(spec: str) -> object:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise PluginNotFoundError(f"{spec!r} is not of the form 'package.module:ClassName'")
    try:
        found: object = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise PluginNotFoundError(f"cannot import {module_name!r}: {exc}") from None
    except Exception as exc:
        raise PluginNotFoundError(
            f"importing {module_name!r} failed: {type(exc).__name__}: {exc}"
        ) from None
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise PluginNotFoundError(f"{module_name!r} has no attribute {attribute!r}") from None
    return found


def _from_entry_point(name: str) -> object:
    matches = entry_points(group=ENTRY_POINT_GROUP, name=name)
    if not matches:
        raise PluginNotFoundError(
            f"no {ENTRY_POINT_GROUP!r} entry point is named {name!r} "
            "(or write an import path 'package.module:ClassName')"
        )
    entry = next(iter(matches))
    try:
        return entry.load()
    except Exception as exc:
        raise PluginNotFoundError(
            f"loading entry point {name!r} ({entry.value}) failed: {type(exc).__name__}: {exc}"
        ) from None
