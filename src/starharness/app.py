"""Composition: turns a profile (plugin rows + config) into a running process.

Commands call only this module to build what they run; nothing else wires plugins together.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, TextIO

from .runtime.config import Patch, ResolvedProfile, available_profiles, load_profile, start
from .runtime.paths import star_harness_home

LLM_ROW = "llm"
APPROVALS_ROW = "approvals"
USER_PROFILES = "profiles"


def web_root() -> Path:
    """The browser client: inside the package when installed, else the checkout's `web/`."""
    packaged = Path(__file__).resolve().parent / "web"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "web"


def builtin_profiles() -> Traversable:
    """The folder of built-in profiles shipped inside the package."""
    return files("starharness.profiles")


def profile_search_path(home: Path | None = None) -> tuple[Traversable, ...]:
    """Where profile names are looked up: `$STAR_HARNESS_HOME/profiles`, then the built-ins."""
    base = home if home is not None else star_harness_home()
    return (base / USER_PROFILES, builtin_profiles())


def profile_names(home: Path | None = None) -> list[str]:
    return available_profiles(profile_search_path(home))


@dataclass(frozen=True, slots=True)
class LlmChoice:
    """The `--provider/--model/--base-url` flags, applied as a patch on the `llm` row."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None

    def patch(self, row_id: str = LLM_ROW) -> Patch | None:
        """A merge patch; a new provider also drops the old provider's model, URL and key name."""
        changes: dict[str, Any] = {}
        if self.provider is not None:
            changes.update(provider=self.provider, model=None, base_url=None, api_key_env=None)
        if self.model is not None:
            changes["model"] = self.model
        if self.base_url is not None:
            changes["base_url"] = self.base_url
        if not changes:
            return None
        return Patch.of("--provider/--model/--base-url", [{"id": row_id, "merge": changes}])


def allow_patch(tools: Sequence[str], row_id: str = APPROVALS_ROW) -> Patch | None:
    """The `--allow TOOL` flags: approval asks for these tools are allowed, others refused."""
    if not tools:
        return None
    merge = {"policy": "never", "mode": None, "allow": list(dict.fromkeys(tools))}
    return Patch.of("--allow", [{"id": row_id, "merge": merge}])


def load(
    profile: str | os.PathLike[str] = "task",
    patch_files: Sequence[str | os.PathLike[str] | Patch] = (),
    *,
    llm: LlmChoice | None = None,
    allow: Sequence[str] = (),
    home: Path | None = None,
) -> ResolvedProfile:
    """Resolve `profile` with its patches, then `--patch` files, then the command-line flags."""
    patches: list[str | os.PathLike[str] | Patch] = list(patch_files)
    for flag_patch in (llm.patch() if llm is not None else None, allow_patch(allow)):
        if flag_patch is not None:
            patches.append(flag_patch)
    return load_profile(profile, patches, search=profile_search_path(home), home=home)


async def run_headless(
    profile: ResolvedProfile,
    task: str,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Start `profile`, run `task` as one agent turn, stop; the exit code of `run`."""
    from .runtime.loop.headless import run_task

    async with await start(profile) as runtime:
        return await run_task(runtime.ctx, task, out=out, err=err)
