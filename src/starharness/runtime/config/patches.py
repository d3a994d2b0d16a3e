"""Patches: ordered edits of a profile's rows, matched by row id."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from typing import Any, cast

from pydantic import TypeAdapter

from .errors import ProfileError
from .schema import PatchRow
from .sources import read_yaml, validate

_PATCH_FILE: TypeAdapter[list[PatchRow]] = TypeAdapter(list[PatchRow])
_ROW: TypeAdapter[PatchRow] = TypeAdapter(PatchRow)


@dataclass(frozen=True, slots=True)
class Patch:
    """A named list of patch rows; `source` says where it came from in errors and dumps."""

    source: str
    rows: tuple[PatchRow, ...]

    @classmethod
    def of(cls, source: str, rows: Iterable[PatchRow | Mapping[str, Any]]) -> Patch:
        """Build a patch in code; mappings are validated like rows of a patch file."""
        built = tuple(
            row if isinstance(row, PatchRow) else validate(_ROW, dict(row), f"patch {source}")
            for row in rows
        )
        return cls(source, built)


def read_patch(path: Traversable) -> Patch:
    """A patch file is a YAML list of patch rows (an empty file is an empty patch)."""
    data = read_yaml(path, "patch file")
    rows = validate(_PATCH_FILE, [] if data is None else data, f"patch file {path}")
    return Patch(str(path), tuple(rows))


@dataclass(slots=True)
class DraftRow:
    """A row while bundles and patches are applied; validated into a ResolvedRow afterwards."""

    id: str
    plugin: str
    config: dict[str, Any]
    bundle: str
    patched_by: list[str] = field(default_factory=list[str])


def apply_patch(rows: list[DraftRow], patch: Patch, profile: str) -> None:
    """Apply `patch` to `rows` in place, row by row, in the patch's order."""
    for change in patch.rows:
        if change.profiles is not None and profile not in change.profiles:
            continue
        where = f"patch {patch.source}: row {change.id!r}"
        index = _index_of(rows, change.id)
        if index is None:
            _add_row(rows, change, patch.source, profile, where)
            continue
        if change.remove:
            del rows[index]
            continue
        row = rows[index]
        if change.plugin is not None:
            row.plugin = change.plugin
        if change.config is not None:
            row.config = copy.deepcopy(change.config)
        if change.merge is not None:
            row.config = merge_patch(row.config, change.merge)
        row.patched_by.append(patch.source)
        if change.after is not None or change.before is not None:
            del rows[index]
            rows.insert(_position(rows, change, where), row)


def _add_row(rows: list[DraftRow], change: PatchRow, source: str, profile: str, where: str) -> None:
    if change.remove:
        raise ProfileError(f"{where} cannot be removed: profile {profile!r} has no such row")
    if change.plugin is None:
        raise ProfileError(
            f"{where} is not in profile {profile!r}; to add the row, give its 'plugin'"
        )
    config = copy.deepcopy(change.config) if change.config is not None else {}
    if change.merge is not None:
        config = merge_patch(config, change.merge)
    row = DraftRow(change.id, change.plugin, config, bundle=f"patch {source}")
    rows.insert(_position(rows, change, where), row)


def _position(rows: list[DraftRow], change: PatchRow, where: str) -> int:
    anchor = change.after if change.after is not None else change.before
    if anchor is None:
        return len(rows)
    index = _index_of(rows, anchor)
    if index is None:
        raise ProfileError(f"{where}: there is no row {anchor!r} to place it next to")
    return index + 1 if change.after is not None else index


def _index_of(rows: list[DraftRow], row_id: str) -> int | None:
    for index, row in enumerate(rows):
        if row.id == row_id:
            return index
    return None


def merge_patch(target: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """RFC 7386 JSON merge patch: mappings merge recursively, `None` deletes, the rest replaces."""
    merged = copy.deepcopy(dict(target))
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
            continue
        current = merged.get(key)
        if isinstance(value, Mapping) and isinstance(current, Mapping):
            merged[key] = merge_patch(
                cast(Mapping[str, Any], current), cast(Mapping[str, Any], value)
            )
        elif isinstance(value, Mapping):
            merged[key] = merge_patch({}, cast(Mapping[str, Any], value))
        else:
            merged[key] = copy.deepcopy(value)
    return merged
