"""Loading a profile: bundles, then patches, then plugin classes, configs and services checked."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from ..kernel import Plugin, ServiceKey
from ..paths import star_harness_home
from .builtins import builtin_provider
from .errors import ProfileError
from .patches import DraftRow, Patch, apply_patch, read_patch
from .plugins import PluginNotFoundError, resolve_plugin
from .schema import InlineBundle, ProfileSpec, RowSpec
from .sources import describe_validation_error, find_named, names_in, read_yaml, validate

_PROFILE: TypeAdapter[ProfileSpec] = TypeAdapter(ProfileSpec)
_BUNDLE: TypeAdapter[list[RowSpec]] = TypeAdapter(list[RowSpec])

USER_PATCH_FILE = "patch.yml"

PatchSource = str | os.PathLike[str] | Patch


@dataclass(frozen=True, slots=True)
class ResolvedRow:
    """A row ready to start: its plugin class and validated config."""

    id: str
    plugin: str
    plugin_class: type[Plugin[Any]]
    config: BaseModel
    bundle: str
    patched_by: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ResolvedProfile:
    """A profile after bundles and patches: rows in start order."""

    name: str
    source: str
    description: str
    rows: tuple[ResolvedRow, ...]
    patches: tuple[str, ...]

    def row(self, row_id: str) -> ResolvedRow:
        for row in self.rows:
            if row.id == row_id:
                return row
        raise ProfileError(f"profile {self.name!r} has no row {row_id!r}")


@dataclass(frozen=True, slots=True)
class _Located:
    name: str
    file: Traversable
    folder: Traversable


def load_profile(
    name_or_path: str | os.PathLike[str],
    patches: Sequence[PatchSource] = (),
    *,
    search: Sequence[Traversable] = (),
    home: Path | None = None,
) -> ResolvedProfile:
    """Resolve a profile by name (looked up in `search`) or by file path.

    Patches apply in this order: `<profile>.patch.yml` next to the profile, the user's
    `$STAR_HARNESS_HOME/patch.yml`, then `patches` in the given order. Reads files: call it
    before the event loop starts or in a thread.
    """
    located = _locate(name_or_path, search)
    spec = validate(_PROFILE, read_yaml(located.file, "profile"), f"profile {located.file}")
    bundle_folders = [located.folder, *search]
    drafts = _rows_from_bundles(spec, bundle_folders, located)

    layers: list[Patch] = []
    own = located.folder.joinpath(f"{located.name}.patch.yml")
    if own.is_file():
        layers.append(read_patch(own))
    user = (home if home is not None else star_harness_home()) / USER_PATCH_FILE
    if user.is_file():
        layers.append(read_patch(user))
    layers.extend(_explicit_patch(source) for source in patches)
    for layer in layers:
        apply_patch(drafts, layer, located.name)

    rows = tuple(_resolve_row(draft) for draft in drafts)
    _check_services(rows)
    return ResolvedProfile(
        name=located.name,
        source=str(located.file),
        description=spec.description,
        rows=rows,
        patches=tuple(layer.source for layer in layers),
    )


def available_profiles(search: Sequence[Traversable]) -> list[str]:
    """Names of the profiles that `search` holds."""
    return names_in(search)


def _locate(name_or_path: str | os.PathLike[str], search: Sequence[Traversable]) -> _Located:
    text = os.fspath(name_or_path)
    looks_like_path = (
        isinstance(name_or_path, os.PathLike)
        or "/" in text
        or os.sep in text
        or text.endswith((".yml", ".yaml"))
    )
    if looks_like_path:
        path = Path(text).expanduser()
        if not path.is_file():
            raise ProfileError(f"profile file {path} does not exist")
        return _Located(path.stem, path, path.parent)
    for folder in search:
        found = find_named(text, [folder])
        if found is not None:
            return _Located(text, found, folder)
    known = ", ".join(names_in(search)) or "none"
    raise ProfileError(f"unknown profile {text!r} (known profiles: {known}; or give a file path)")


def _rows_from_bundles(
    spec: ProfileSpec, folders: Sequence[Traversable], located: _Located
) -> list[DraftRow]:
    drafts: list[DraftRow] = []
    seen: dict[str, str] = {}
    for entry in spec.bundles:
        name, rows = _bundle_rows(entry, folders, located)
        for row in rows:
            if row.id in seen:
                raise ProfileError(
                    f"profile {located.name!r}: row id {row.id!r} appears in bundle "
                    f"{seen[row.id]!r} and again in bundle {name!r}; use a patch to change a row"
                )
            seen[row.id] = name
            drafts.append(DraftRow(row.id, row.plugin, dict(row.config), bundle=name))
    return drafts


def _bundle_rows(
    entry: str | InlineBundle, folders: Sequence[Traversable], located: _Located
) -> tuple[str, list[RowSpec]]:
    if isinstance(entry, InlineBundle):
        return entry.name, entry.rows
    if entry.endswith((".yml", ".yaml")):
        file: Traversable | None = located.folder.joinpath(entry)
        if not file.is_file():
            file = None
    else:
        file = find_named(entry, [folder.joinpath("bundles") for folder in folders])
    if file is None:
        raise ProfileError(
            f"profile {located.name!r}: bundle {entry!r} not found (looked for bundles/{entry}.yml)"
        )
    data = read_yaml(file, "bundle")
    return entry, validate(_BUNDLE, [] if data is None else data, f"bundle {file}")


def _explicit_patch(source: PatchSource) -> Patch:
    if isinstance(source, Patch):
        return source
    path = Path(os.fspath(source)).expanduser()
    if not path.is_file():
        raise ProfileError(f"patch file {path} does not exist")
    return read_patch(path)


def _resolve_row(draft: DraftRow) -> ResolvedRow:
    where = f"row {draft.id!r} ({draft.plugin})"
    try:
        plugin_class = resolve_plugin(draft.plugin)
    except PluginNotFoundError as exc:
        raise ProfileError(f"row {draft.id!r}: unknown plugin {draft.plugin!r}: {exc}") from None
    try:
        config = plugin_class.Config.model_validate(draft.config)
    except ValidationError as exc:
        raise ProfileError(f"{where}: {describe_validation_error(exc, 'config')}") from None
    return ResolvedRow(
        id=draft.id,
        plugin=draft.plugin,
        plugin_class=plugin_class,
        config=config,
        bundle=draft.bundle,
        patched_by=tuple(draft.patched_by),
    )


def _check_services(rows: Sequence[ResolvedRow]) -> None:
    """Every injected service must be provided by an earlier row.

    Two rows may declare the same service (a second LLM row joins the first one's service);
    a real conflict is refused by the Context when the second one starts.
    """
    provided: set[str] = set()
    for index, row in enumerate(rows):
        for key in row.plugin_class.inject:
            if key.name not in provided:
                raise ProfileError(_missing_service(rows, index, key))
        provided.update(key.name for key in row.plugin_class.provides)


def _missing_service(rows: Sequence[ResolvedRow], index: int, key: ServiceKey[Any]) -> str:
    row = rows[index]
    needs = f"row {row.id!r} ({row.plugin}) needs the service {key.name!r}"
    for later in rows[index + 1 :]:
        if any(provided.name == key.name for provided in later.plugin_class.provides):
            return (
                f"{needs}, which row {later.id!r} ({later.plugin}) provides but starts later; "
                f"move {later.id!r} before {row.id!r}"
            )
    provider = key.provider or builtin_provider(key.name)
    if provider:
        return f"{needs} but no row provides it; add a row with plugin {provider}"
    hint = f" ({key.doc})" if key.doc else ""
    return f"{needs} but no row provides it{hint}"
