"""Composition: turns a profile (plugin rows + config) into a running process.

Commands call only this module to build what they run; nothing else wires plugins together.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .errors import CliError
from .runtime.approvals import ApprovalsPlugin
from .runtime.ask_user import AskUserPlugin
from .runtime.config import Patch, ResolvedProfile, load_profile, start
from .runtime.llm import LLM, LlmPlugin
from .runtime.loop import AgentsPlugin
from .runtime.paths import star_harness_home
from .runtime.workspace import WorkspacePlugin

if TYPE_CHECKING:
    from .runtime.llm import LlmConfig

LLM_ROW = "llm"
APPROVALS_ROW = "approvals"
SERVER_ROW = "server"
SESSIONS_ROW = "sessions"
USER_PROFILES = "profiles"
OFFLINE_BRAIN = "starharness.offline:OfflineBrainPlugin"

PatchSource = str | os.PathLike[str] | Patch


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
    patches = _with_flags(patch_files, llm, allow)
    return load_profile(profile, patches, search=profile_search_path(home), home=home)


def _with_flags(
    patch_files: Sequence[PatchSource], llm: LlmChoice | None, allow: Sequence[str]
) -> list[PatchSource]:
    patches: list[PatchSource] = list(patch_files)
    for flag_patch in (llm.patch() if llm is not None else None, allow_patch(allow)):
        if flag_patch is not None:
            patches.append(flag_patch)
    return patches


# -- the game commands (play, serve) and eval: a model, or the game's offline brain --------------


def load_game(
    command: str,
    patches: Sequence[PatchSource],
    *,
    offline: bool,
    provider_chosen: bool,
    check_game: Callable[[str], None] | None = None,
) -> ResolvedProfile:
    """`command`'s profile with `patches`; the offline brain when asked, or when no provider was
    chosen and the profile's llm row has no key to use. `check_game` sees the server row's game
    first (it raises when the game cannot be served)."""
    resolved = load(command, patches)
    resolved.row(SERVER_ROW)  # a ProfileError naming the row when a patch removed it
    if check_game is not None:
        check_game(str(dict(resolved.row(SERVER_ROW).config).get("game")))
    if offline or (not provider_chosen and not has_model_key(resolved)):
        game = str(dict(resolved.row(SERVER_ROW).config).get("game"))
        resolved = load(command, [*patches, offline_brain_patch(game)])
    return resolved


def offline_brain_patch(game: str, source: str = "offline brain (no API key)") -> Patch:
    """Replace the llm row with `game`'s offline brain (the mock LLM over real HTTP)."""
    row = {"id": LLM_ROW, "plugin": OFFLINE_BRAIN, "config": {"game": game}}
    return Patch.of(source, [row])


def has_model_key(profile: ResolvedProfile) -> bool:
    """Whether the llm row can reach its model; a row that is not the LlmPlugin is used as is."""
    from .runtime.credentials import resolve_secret
    from .runtime.llm import LlmConfig, get_profile

    row = profile.row(LLM_ROW)
    config = row.config
    if not issubclass(row.plugin_class, LlmPlugin) or not isinstance(config, LlmConfig):
        return True  # someone patched in another brain: use it as it is
    provider = get_profile(config.provider)
    variable = config.api_key_env or provider.api_key_env
    if not provider.key_required:
        return True
    return bool(variable) and resolve_secret(str(variable)) is not None


def uses_offline_brain(profile: ResolvedProfile) -> bool:
    from .offline import OfflineBrainPlugin

    return issubclass(profile.row(LLM_ROW).plugin_class, OfflineBrainPlugin)


def eval_profile(
    game: str,
    world: Path,
    patch_files: Sequence[PatchSource] = (),
    *,
    llm: LlmChoice | None = None,
    offline: bool = False,
) -> ResolvedProfile:
    """`serve`'s profile on a loopback port 0, a fresh world, sessions in memory, the model."""
    patches: list[PatchSource] = list(patch_files)
    if not offline and llm is not None:
        choice = llm.patch()
        if choice is not None:
            patches.append(choice)
    server = {"host": "127.0.0.1", "port": 0, "world": str(world), "game": game}
    patches.append(
        Patch.of(
            "eval",
            [
                {"id": SERVER_ROW, "merge": server},
                {"id": SESSIONS_ROW, "merge": {"store": "memory"}},
            ],
        )
    )
    if offline:
        patches.append(offline_brain_patch(game, "eval --offline"))
    return load("serve", patches)


# -- the agent commands (run, chat, mcp): the command's own patches ----------------------------


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
    patch_files: Sequence[PatchSource] = (),
    *,
    llm: LlmChoice | None = None,
    allow: Sequence[str] = (),
    project: Path | None = None,
    interactive: bool = False,
    tools_only: bool = False,
) -> ResolvedProfile:
    """Resolve `profile` with `--patch` files and flag patches, then the command's own patches.

    `--project DIR` points the workspace row at DIR; `interactive` makes approvals ask at the
    terminal; `tools_only` drops the agent loop and, when nothing else needs it, the LLM row.
    Each is a named patch, so `config --dump` shows where a value came from.
    """
    patches = _with_flags(patch_files, llm, allow)
    search = profile_search_path()
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
            "none; use --profile godot or a default profile (agent; headless for run), or "
            "add a row with plugin starharness.runtime.workspace:WorkspacePlugin"
        )
    return Patch.of(
        f"{command} --project", [{"id": row, "merge": {"root": str(folder)}} for row in rows]
    )


def _interactive_patch(command: str, resolved: ResolvedProfile) -> list[Patch]:
    rows = _rows_of(resolved, ApprovalsPlugin)
    if not rows:
        return []
    merge: dict[str, Any] = {"policy": "ask", "mode": None, "allow": None}
    return [
        Patch.of(f"{command} (asks at the terminal)", [{"id": r, "merge": merge} for r in rows])
    ]


def _tools_only_patch(command: str, resolved: ResolvedProfile) -> list[Patch]:
    # Over MCP the client is the agent and no one answers ask_user, so that row goes too.
    loop_rows = [*_rows_of(resolved, AgentsPlugin), *_rows_of(resolved, AskUserPlugin)]
    # Rows that serve only agents (context management: docs/context.md) go with the loop.
    loop_rows += [r.id for r in resolved.rows if getattr(r.plugin_class, "needs_agent_loop", False)]
    others = [row for row in resolved.rows if row.id not in loop_rows]
    still_needed = any(LLM in row.plugin_class.inject for row in others)
    llm_rows = [] if still_needed else [r.id for r in others if LLM in r.plugin_class.provides]
    removed = [*loop_rows, *llm_rows]
    if not removed:
        return []
    return [Patch.of(f"{command} (no agent loop)", [{"id": r, "remove": True} for r in removed])]


_MODEL_FLAGS = (
    "or choose a model with --provider, --model and --base-url (a local OpenAI-compatible "
    "server: --provider openai-compatible --base-url http://127.0.0.1:8080/v1 --model NAME)"
)


@dataclass(frozen=True, slots=True)
class _ModelProblem:
    text: str
    """What keeps the model from being used, and the variable or flag that fixes it."""
    variable: str | None
    """The environment variable that would hold the missing key, when a key is missing."""


async def _model_problem(config: LlmConfig, restart: str | None = None) -> _ModelProblem | None:
    """Why the provider `config` describes cannot be built, with the fix; None if it can.
    `restart`: the command to run again once the variable is set (a server that keeps running)."""
    from .runtime.llm import (
        MissingCredentialError,
        ProviderConfigError,
        build_provider,
        get_profile,
    )

    try:
        provider = await build_provider(config)
    except MissingCredentialError as exc:
        variable = config.api_key_env or get_profile(config.provider).api_key_env
        again = f"; set it and restart `{restart}`," if restart else ";"
        return _ModelProblem(f"{exc}{again} {_MODEL_FLAGS}", variable)
    except ProviderConfigError as exc:
        return _ModelProblem(f"{exc}; {_MODEL_FLAGS}", None)
    await provider.aclose()
    return None


async def require_model(profile: ResolvedProfile, command: str) -> None:
    """A CliError saying which variable or flag to set when an llm row cannot reach its model
    (`run` and `chat` need one; the row's own start error names the plugin, not the fix)."""
    from .runtime.llm import LlmConfig

    for row in profile.rows:
        if issubclass(row.plugin_class, LlmPlugin) and isinstance(row.config, LlmConfig):
            problem = await _model_problem(row.config)
            if problem is not None:
                raise CliError(f"{command} needs a model: {problem.text}")


async def without_unusable_models(profile: ResolvedProfile, restart: str) -> ResolvedProfile:
    """`profile` with each llm row that cannot build its provider replaced by a placeholder that
    answers every request with the problem and its fix (`restart`: the command to run again).
    For the protocol servers (`rpc`, `acp`): a client connects and is told, rather than meeting
    a process that exited."""
    import dataclasses

    from .runtime.llm import (
        UNCONFIGURED_PLUGIN,
        LlmConfig,
        UnconfiguredLlmConfig,
        UnconfiguredLlmPlugin,
    )

    rows: list[Any] = []
    for row in profile.rows:
        if issubclass(row.plugin_class, LlmPlugin) and isinstance(row.config, LlmConfig):
            problem = await _model_problem(row.config, restart)
            if problem is not None:
                name = row.config.name or row.config.provider
                row = dataclasses.replace(
                    row,
                    plugin=UNCONFIGURED_PLUGIN,
                    plugin_class=UnconfiguredLlmPlugin,
                    config=UnconfiguredLlmConfig(
                        problem=f"no model is configured: {problem.text}",
                        name=name,
                        variable=problem.variable,
                    ),
                )
        rows.append(row)
    return dataclasses.replace(profile, rows=tuple(rows))


async def run_headless(
    profile: ResolvedProfile,
    task: str,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Start `profile`, run `task` as one agent turn, stop; the exit code of `run`."""
    from .runtime.loop.headless import run_task

    await require_model(profile, "run")
    async with await start(profile) as runtime:
        return await run_task(runtime.ctx, task, out=out, err=err)
