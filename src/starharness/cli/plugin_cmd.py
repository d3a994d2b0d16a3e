"""`star-harness plugin list|add|remove`: third-party plugin rows in the user's patch file.

The user's patch file is `$STAR_HARNESS_HOME/patch.yml`, applied to every profile after the
profile's own patch and before `--patch` files (docs/runtime.md). `add` and `remove` edit it in
place (the text edits are in `_patch_file`), keeping the user's other rows and comments. A change
is written only when every profile that loaded before still loads after it.
"""

from __future__ import annotations

import difflib
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from ._errors import CliError
from ._llm_options import AGENT_PROFILE
from ._patch_file import appended, patch_of, read_rows, user_patch_path, without

if TYPE_CHECKING:
    from ..runtime.config import Patch, ResolvedProfile

_ROW_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*")
_SUFFIX = re.compile(r"_?plugin$")


def register(app: typer.Typer) -> None:
    """Add the `plugin` command group to `app`."""
    group = typer.Typer(
        help=(
            "List, add and remove plugin rows in your patch file ($STAR_HARNESS_HOME/patch.yml), "
            "which every profile applies."
        ),
        no_args_is_help=True,
    )
    group.command("list", help="Show the rows a profile starts with, and where each comes from.")(
        list_rows
    )
    group.command(
        "add",
        help=(
            "Add a plugin row to your patch file. PLUGIN is an import path "
            "'package.module:Class' or the name of a 'star_harness.plugins' entry point."
        ),
    )(add_row)
    group.command("remove", help="Remove a row from your patch file.")(remove_row)
    app.add_typer(group, name="plugin")


ProfileOption = Annotated[
    str | None,
    typer.Option(
        "--profile",
        help="list: the profile to show (default agent). add: apply the row to this profile only.",
        show_default=False,
    ),
]


def list_rows(profile: ProfileOption = None) -> None:
    from .. import composition

    name = profile or AGENT_PROFILE
    resolved = composition.load(name)
    user = user_patch_path()
    table = [("ID", "PLUGIN", "FROM")]
    for row in resolved.rows:
        origin = row.bundle if row.bundle.startswith("patch ") else f"bundle {row.bundle}"
        if row.patched_by:
            origin += f", changed by patch {', '.join(row.patched_by)}"
        table.append((row.id, row.plugin, origin))
    widths = [max(len(line[i]) for line in table) for i in range(2)]
    out = [f"profile {resolved.name} ({resolved.source})"]
    out += [f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c}" for a, b, c in table]
    ids = {row.id for row in resolved.rows}
    elsewhere = [row for row in read_rows(user) if row.id not in ids and not row.remove]
    if elsewhere:
        out.append(f"in {user} but not in this profile:")
        out += [f"  {row.id} (profiles: {', '.join(row.profiles or ['all'])})" for row in elsewhere]
    sys.stdout.write("\n".join(out) + "\n")


def add_row(
    plugin: Annotated[str, typer.Argument(help="'package.module:Class' or an entry point name.")],
    row_id: Annotated[
        str | None,
        typer.Option("--id", help="The row's id (default: from the plugin's name).", metavar="ID"),
    ] = None,
    config: Annotated[
        str | None,
        typer.Option(help="The row's config as a JSON or YAML mapping.", metavar="MAPPING"),
    ] = None,
    after: Annotated[
        str | None, typer.Option(help="Start the row after this row.", metavar="ID")
    ] = None,
    before: Annotated[
        str | None, typer.Option(help="Start the row before this row.", metavar="ID")
    ] = None,
    replace: Annotated[
        bool,
        typer.Option(help="The id names a row of the profile: swap that row's plugin for this."),
    ] = False,
    profile: ProfileOption = None,
) -> None:
    plugin_class = _resolve(plugin)
    row_id = row_id or _default_id(plugin)
    settings = _parse_config(config)
    _check_config(plugin, plugin_class, settings)
    if after is not None and before is not None:
        raise CliError("plugin add: give --after or --before, not both")
    user = user_patch_path()
    mine = read_rows(user)
    if any(row.id == row_id for row in mine):
        raise CliError(
            f"plugin add: your patch file {user} already has a row {row_id!r}; "
            f"remove it first (star-harness plugin remove {row_id}) or give another --id"
        )
    row: dict[str, Any] = {"id": row_id, "plugin": plugin}
    if settings:
        row["config"] = settings
    if after is not None:
        row["after"] = after
    if before is not None:
        row["before"] = before
    if profile is not None:
        row["profiles"] = [profile]
    _refuse_silent_replacement(row_id, profile, replace)
    text = user.read_text(encoding="utf-8") if user.is_file() else ""
    _save(user, text, appended(text, row))
    where = f"profile {profile}" if profile else "every profile"
    sys.stdout.write(f"added row {row_id!r} ({plugin}) to {user}, for {where}\n")


def remove_row(
    row_id: Annotated[str, typer.Argument(help="The id of a row in your patch file.")],
) -> None:
    user = user_patch_path()
    mine = read_rows(user)
    if not any(row.id == row_id for row in mine):
        raise CliError(f"plugin remove: {_not_in_file(row_id, user, [r.id for r in mine])}")
    text = user.read_text(encoding="utf-8")
    _save(user, text, without(text, row_id))
    sys.stdout.write(f"removed row {row_id!r} from {user}\n")


# -- the patch file ------------------------------------------------------------------------------


def _save(path: Path, old: str, new: str) -> None:
    """Write `new` if every profile that loads with `old` still loads with it."""
    from ..runtime.config import ProfileError

    try:
        candidate = patch_of(str(path), new)
    except ProfileError as exc:
        raise CliError(f"plugin: the change would break {path}: {exc}") from None
    before = patch_of(str(path), old)
    _check_profiles(before, candidate)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(new, encoding="utf-8")
    temporary.replace(path)


def _check_profiles(before: Patch, after: Patch) -> None:
    """Refuse `after` when a profile that loads with `before` does not load with it."""
    import tempfile

    from .. import composition
    from ..runtime.config import ProfileError, available_profiles, load_profile

    search = composition.profile_search_path()
    with tempfile.TemporaryDirectory() as empty:
        # The user's patch comes in as `before` or `after`, not from the file in the home.
        def load(name: str, patch: Patch) -> ResolvedProfile:
            return load_profile(name, [patch], search=search, home=Path(empty))

        for name in available_profiles(search):
            try:
                load(name, before)
            except ProfileError:
                continue  # broken already: not this change's doing
            try:
                load(name, after)
            except ProfileError as exc:
                raise CliError(
                    f"plugin: not changed: profile {name!r} would not load: {exc}"
                ) from None


# -- checks with clear errors -------------------------------------------------------------------


def _resolve(spec: str) -> type[Any]:
    from ..runtime.config import PluginNotFoundError
    from ..runtime.config.plugins import resolve_plugin

    try:
        return resolve_plugin(spec)
    except PluginNotFoundError as exc:
        hint = _plugin_hint(spec)
        raise CliError(f"plugin add: unknown plugin {spec!r}: {exc}{hint}") from None


def _plugin_hint(spec: str) -> str:
    """Close names: Plugin classes of the named module, or installed entry points."""
    import importlib
    import inspect
    from importlib.metadata import entry_points

    from ..runtime.config.plugins import ENTRY_POINT_GROUP
    from ..runtime.kernel import Plugin

    if ":" in spec:
        module_name, _, attribute = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
        except Exception:
            return ""
        names = [
            name
            for name, value in inspect.getmembers(module, inspect.isclass)
            if issubclass(value, Plugin) and value is not Plugin
        ]
        close = difflib.get_close_matches(attribute, names, n=3)
        return f"; did you mean {', '.join(f'{module_name}:{n}' for n in close)}?" if close else ""
    installed = sorted({entry.name for entry in entry_points(group=ENTRY_POINT_GROUP)})
    close = difflib.get_close_matches(spec, installed, n=3)
    if close:
        return f"; did you mean {', '.join(close)}?"
    return f" (installed entry points: {', '.join(installed) or 'none'})"


def _default_id(spec: str) -> str:
    name = spec.rpartition(":")[2].rpartition(".")[2] if ":" in spec else spec
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    row_id = _SUFFIX.sub("", snake) or snake
    if not _ROW_ID.fullmatch(row_id):
        raise CliError(f"plugin add: cannot make a row id from {spec!r}; give one with --id")
    return row_id


def _parse_config(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CliError(f"plugin add: --config is not JSON or YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise CliError(
            f"plugin add: --config must be a mapping like '{{\"key\": 1}}', not {text!r}"
        )
    return {str(key): value for key, value in cast(dict[object, Any], data).items()}


def _check_config(spec: str, plugin_class: type[Any], settings: dict[str, Any]) -> None:
    from pydantic import BaseModel, ValidationError

    from ..runtime.config.sources import describe_validation_error

    model: type[BaseModel] = plugin_class.Config
    try:
        model.model_validate(settings)
    except ValidationError as exc:
        detail = describe_validation_error(exc, "config")
        raise CliError(f"plugin add: {spec}: {detail}") from None


def _refuse_silent_replacement(row_id: str, profile: str | None, replace: bool) -> None:
    """A new row whose id a profile already has would swap that row's plugin: say so."""
    from .. import composition
    from ..runtime.config import ProfileError, available_profiles

    names = [profile] if profile else available_profiles(composition.profile_search_path())
    having: list[str] = []
    for name in names:
        try:
            resolved = composition.load(name)
        except ProfileError:
            continue  # the check on save names what is wrong
        row = next((row for row in resolved.rows if row.id == row_id), None)
        if row is not None:
            having.append(f"{name!r} ({row.plugin})")
    if having and not replace:
        raise CliError(
            f"plugin add: profile {', '.join(having)} already has a row {row_id!r}; give "
            "another --id, --profile NAME to add it to one profile, or --replace to swap "
            "that row's plugin"
        )
    if not having and replace:
        where = f"profile {profile!r}" if profile else "no profile"
        raise CliError(f"plugin add: --replace: {where} has a row {row_id!r} to replace")


def _not_in_file(row_id: str, path: Path, ids: list[str]) -> str:
    message = f"your patch file {path} has no row {row_id!r}"
    close = difflib.get_close_matches(row_id, ids, n=3)
    if close:
        return f"{message}; did you mean {', '.join(close)}?"
    from .. import composition
    from ..runtime.config import ProfileError

    try:
        resolved = composition.load(AGENT_PROFILE)
        row = next((r for r in resolved.rows if r.id == row_id), None)
    except ProfileError:
        row = None
    if row is not None:
        return (
            f"{message}: it comes from bundle {row.bundle!r}; to drop it from every profile, "
            f"add '- {{id: {row_id}, remove: true}}' to {path}"
        )
    return f"{message} (its rows: {', '.join(ids) or 'none'})"
