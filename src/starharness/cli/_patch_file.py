"""The user's patch file ($STAR_HARNESS_HOME/patch.yml) as text: its rows, and the edits
`plugin add` and `plugin remove` make to it.

A row is appended or cut out as lines, so the user's other rows and comments stay as they were;
a file written in flow style (`[...]`, as programs write it) is rewritten whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from ..runtime.config import Patch


@dataclass(frozen=True, slots=True)
class FileRow:
    """What `plugin list` and the checks need of a row of the file."""

    id: str
    remove: bool
    profiles: list[str] | None


def user_patch_path() -> Path:
    """Where the user's patch file is (it may not exist)."""
    from ..runtime.config.profile import USER_PATCH_FILE
    from ..runtime.paths import star_harness_home

    return star_harness_home() / USER_PATCH_FILE


def read_rows(path: Path) -> list[FileRow]:
    """The rows of the patch file at `path` (none when there is no file)."""
    if not path.is_file():
        return []
    from ..runtime.config.patches import read_patch

    patch = read_patch(path)
    return [FileRow(row.id, row.remove, row.profiles) for row in patch.rows]


def appended(text: str, row: dict[str, Any]) -> str:
    """`text` with `row` added at the end, the rest of the file as it was."""
    import yaml

    node = _compose(text)
    if isinstance(node, yaml.CollectionNode) and node.flow_style:
        return _dumped([*_loaded_rows(text), row])
    block = yaml.safe_dump([row], sort_keys=False, default_flow_style=False)
    if text and not text.endswith("\n"):
        text += "\n"
    return text + block


def without(text: str, row_id: str) -> str:
    """`text` without the rows whose id is `row_id`; other rows and comments kept."""
    import yaml

    node = _compose(text)
    if not isinstance(node, yaml.SequenceNode):
        return text
    items = cast(list[yaml.Node], node.value)
    if node.flow_style:
        kept = [r for r in _loaded_rows(text) if _row_id_of(r) != row_id]
        return _dumped(kept)
    lines = text.splitlines(keepends=True)
    cuts: list[tuple[int, int]] = []
    for item in items:
        if _node_id(item) != row_id:
            continue
        first, end = item.start_mark.line, item.end_mark.line
        if item.end_mark.column > 0:
            end += 1  # the last line has the row's text: it goes too
        # Blank and comment lines at its end belong to the row after it.
        while end > first + 1 and _blank_or_comment(lines[end - 1]):
            end -= 1
        cuts.append((first, end))
    for first, end in reversed(cuts):
        del lines[first:end]
    return "".join(lines)


def _compose(text: str) -> object:
    """The YAML node tree of `text` (None for an empty file)."""
    import yaml

    if not text.strip():
        return None
    return cast(object, yaml.compose(text))  # pyright: ignore[reportUnknownMemberType]


def _loaded_rows(text: str) -> list[object]:
    import yaml

    data = cast(object, yaml.safe_load(text))
    return cast(list[object], data) if isinstance(data, list) else []


def _row_id_of(row: object) -> object:
    return cast(dict[object, object], row).get("id") if isinstance(row, dict) else None


def _blank_or_comment(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _node_id(item: Any) -> str | None:
    import yaml

    if not isinstance(item, yaml.MappingNode):
        return None
    for key, value in item.value:
        if getattr(key, "value", None) == "id" and isinstance(value, yaml.ScalarNode):
            return str(value.value)
    return None


def _dumped(rows: list[Any]) -> str:
    import yaml

    if not rows:
        return "[]\n"
    return str(yaml.safe_dump(rows, sort_keys=False, default_flow_style=False))


def patch_of(source: str, text: str) -> Patch:
    """`text` read as a patch file would be (a ProfileError when it is not one)."""
    import yaml

    from ..runtime.config import Patch
    from ..runtime.config.errors import ProfileError

    try:
        data = yaml.safe_load(text) if text.strip() else None
    except yaml.YAMLError as exc:
        raise ProfileError(f"invalid YAML: {exc}") from None
    if data is None:
        return Patch(source, ())
    if not isinstance(data, list):
        raise ProfileError("a patch file is a list of rows")
    return Patch.of(source, data)  # pyright: ignore[reportUnknownArgumentType]
