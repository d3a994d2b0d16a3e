"""Loading a profile for an agent command: the user's patches, then what the command needs.

`--project DIR` points the workspace row at DIR; `chat` makes approvals interactive (a person
is at the terminal); `mcp` drops the agent loop and, when nothing else needs it, the LLM row.
Each of these is a named patch, so `config --dump` style output shows where a value came from.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from starharness import app as composition
from starharness.runtime.approvals import ApprovalsPlugin
from starharness.runtime.config import Patch, ResolvedProfile, load_profile
from starharness.runtime.llm import LLM
from starharness.runtime.loop import AgentsPlugin
from starharness.runtime.workspace import WorkspacePlugin

from ._errors import CliError

PatchSource = str | os.PathLike[str] | Patch


def project_folder(command: str, project: Path) -> Path:
    """`--project DIR` as an absolute folder; a clear error when it is not one."""
    folder = project.expanduser().resolve()
    if not folder.exists():
        raise CliError(f"{command}: --project {project}: the folder does not exist")
    if not folder.is_dir():
        raise CliError(f"{command}: --project {project}: not a folder")
    return folder


def load_for_command(
    command: str,
    profile: str,
    patch_files: Sequence[Path] = (),
    *,
    llm: composition.LlmChoice | None = None,
    allow: Sequence[str] = (),
    project: Path | None = None,
    interactive: bool = False,
    tools_only: bool = False,
) -> ResolvedProfile:
    """Resolve `profile` with `--patch` files and flag patches, then the command's own patches."""
    patches: list[PatchSource] = list(patch_files)
    for flag_patch in (llm.patch() if llm is not None else None, composition.allow_patch(allow)):
        if flag_patch is not None:
            patches.append(flag_patch)
    search = composition.profile_search_path()
    resolved = load_profile(profile, patches, search=search)
    extra: list[Patch] = []
    if project is not None:
        extra.append(_project_patch(command, resolved, project_folder(command, project)))
    if interactive:
        extra.extend(_interactive_patch(command, resolved))
    if tools_only:
        extra.extend(_tools_only_patch(command, resolved))
    if not extra:
        return resolved
    return load_profile(profile, [*patches, *extra], search=search)


def _rows_of(resolved: ResolvedProfile, plugin: type[Any]) -> list[str]:
    return [row.id for row in resolved.rows if issubclass(row.plugin_class, plugin)]


def _project_patch(command: str, resolved: ResolvedProfile, folder: Path) -> Patch:
    rows = _rows_of(resolved, WorkspacePlugin)
    if not rows:
        raise CliError(
            f"{command}: --project needs a workspace row, and profile {resolved.name!r} has "
            "none; use --profile godot, or add a row with plugin "
            "starharness.runtime.workspace:WorkspacePlugin"
        )
    return Patch.of(
        f"{command} --project", [{"id": row, "merge": {"root": str(folder)}} for row in rows]
    )


def _interactive_patch(command: str, resolved: ResolvedProfile) -> list[Patch]:
    rows = _rows_of(resolved, ApprovalsPlugin)
    if not rows:
        return []
    merge: dict[str, Any] = {"mode": "interactive", "allow": None}
    return [
        Patch.of(f"{command} (asks at the terminal)", [{"id": r, "merge": merge} for r in rows])
    ]


def _tools_only_patch(command: str, resolved: ResolvedProfile) -> list[Patch]:
    loop_rows = _rows_of(resolved, AgentsPlugin)
    others = [row for row in resolved.rows if row.id not in loop_rows]
    still_needed = any(LLM in row.plugin_class.inject for row in others)
    llm_rows = [] if still_needed else [r.id for r in others if LLM in r.plugin_class.provides]
    removed = [*loop_rows, *llm_rows]
    if not removed:
        return []
    return [Patch.of(f"{command} (no agent loop)", [{"id": r, "remove": True} for r in removed])]
