"""What `play` and `serve` share: flags to patches, the offline-brain choice, run until Ctrl-C."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import composition
from ..errors import CliError
from ..runtime.config import Patch, ResolvedProfile

SERVER_ROW = composition.SERVER_ROW


@dataclass(frozen=True, slots=True)
class GameFlags:
    """The flags `play` and `serve` accept."""

    host: str | None
    port: int | None
    game: str | None
    world: str | None
    provider: str | None
    model: str | None
    base_url: str | None
    offline: bool
    patch_files: Sequence[Path]
    auth_token_env: str | None
    allow_origin: Sequence[str]
    ready_file: Path | None
    player_secret_env: str | None = None
    public_names: Sequence[str] = ()
    residents: Sequence[str] = ()
    world_password_env: str | None = None
    fanout: str | None = None
    fanout_password_env: str | None = None
    worker_id: str | None = None
    world_connections: int | None = None


def resolve(command: str, flags: GameFlags, *, web_root: Path | None) -> ResolvedProfile:
    """The command's profile with `--patch` files, then the flags as named patches."""
    if flags.offline and (flags.provider or flags.model or flags.base_url):
        raise CliError(
            f"{command}: --offline cannot be combined with --provider/--model/--base-url"
        )
    patches: list[Any] = list(flags.patch_files)  # paths and Patch objects
    llm = composition.LlmChoice(flags.provider, flags.model, flags.base_url).patch()
    if llm is not None:
        patches.append(llm)
    server: dict[str, Any] = {}
    for key, value in (
        ("host", flags.host),
        ("port", flags.port),
        ("game", flags.game),
        ("world", flags.world),
        ("world_password_env", flags.world_password_env),
        ("world_connections", flags.world_connections),
        ("auth_token_env", flags.auth_token_env),
        ("ready_file", str(flags.ready_file) if flags.ready_file else None),
    ):
        if value is not None:
            server[key] = value
    if flags.allow_origin:
        server["allow_origin"] = list(flags.allow_origin)
    if flags.player_secret_env is not None:
        server["identity"] = {"secret_env": flags.player_secret_env}
    if flags.public_names:
        server["public_names"] = list(flags.public_names)
    if flags.residents:
        server["residents"] = list(flags.residents)
    if flags.world_connections is not None:
        from ..runtime.session.postgres import is_postgres_url

        if not is_postgres_url(flags.world or ""):
            raise CliError(
                f"{command}: --world-connections is for a postgresql:// --world, not a world file"
            )
    if flags.fanout_password_env is not None and flags.fanout is None:
        raise CliError(f"{command}: --fanout-password-env needs --fanout URL")
    if flags.fanout is not None:
        server["fanout"] = {"url": flags.fanout, "password_env": flags.fanout_password_env}
    if flags.worker_id is not None:
        server["worker_id"] = flags.worker_id
    if web_root is not None:
        server["web_root"] = str(web_root)
    if server:
        patches.append(Patch.of(f"{command} flags", [{"id": SERVER_ROW, "merge": server}]))
    from ._startup_errors import check_world_path, game_problem

    world_problem = check_world_path(flags.world, flags.world_password_env)
    if world_problem is not None:
        raise CliError(f"{command}: {world_problem}")

    def check_game(spec: str) -> None:
        problem = game_problem(spec)
        if problem is not None:
            raise CliError(f"{command}: {problem}")

    return composition.load_game(
        command,
        patches,
        offline=flags.offline,
        provider_chosen=flags.provider is not None,
        check_game=check_game,
    )


def brain_label(profile: ResolvedProfile) -> str:
    if composition.uses_offline_brain(profile):
        return "offline brain (no API key; set DEEPSEEK_API_KEY or use --provider for a real model)"
    config = dict(profile.row(composition.LLM_ROW).config)
    label = f"{config.get('provider')} / {config.get('model') or _default_model(config)}"
    if config.get("base_url"):
        label += f" at {config['base_url']}"
    return label


def _default_model(config: dict[str, Any]) -> str:
    """The model a provider uses when none is named, by its name (not "default model")."""
    from ..runtime.llm import get_profile

    try:
        model = get_profile(str(config.get("provider") or "deepseek")).default_model
    except Exception:
        return "the provider's default model"
    return f"{model} (the provider's default)" if model else "the provider's default model"


def serve_until_stopped(command: str, profile: ResolvedProfile, started_at: float) -> int:
    """Start the profile, print where it serves, and run until Ctrl-C or SIGTERM."""
    try:
        return asyncio.run(_serve(command, profile, started_at))
    except KeyboardInterrupt:
        return 130


async def _serve(command: str, profile: ResolvedProfile, started_at: float) -> int:
    from ..npc import NPC_SERVER
    from ..npc.server import tune_gc_for_serving
    from ..runtime.config import start

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)
    from ..runtime.config import PluginStartError
    from ._startup_errors import startup_problem

    _log_to_stderr()
    try:
        runtime = await start(profile)
    except OSError as exc:
        raise CliError(f"{command}: {_os_error(exc)}") from None
    except PluginStartError as exc:
        problem = startup_problem(exc, profile)
        if problem is None:
            raise
        raise CliError(f"{command}: {problem}") from None
    async with runtime:
        running = runtime.ctx.get(NPC_SERVER)
        tune_gc_for_serving()
        server = profile.row(SERVER_ROW)
        config = dict(server.config)
        world = _world_label(config.get("world")) or _default_world(str(config.get("game")))
        ready_s = time.perf_counter() - started_at
        _say(f"star-harness {command}: serving {config.get('game')}")
        if config.get("web_root"):
            _say(f"  open       {running.url}/  (browser client)")
        else:
            _say(f"  headless   {running.url}/ answers 404; engines connect to the frame endpoint")
        _say(f"  frames     {running.ws_url}")
        _say(f"  world      {world}")
        _say(f"  brain      {brain_label(profile)}")
        _say(f"  worker     {running.server.metrics.worker}  ({_fanout_label(server.config)})")
        _say(f"  ready in   {ready_s:.2f} s  (Ctrl-C stops)")
        await stop.wait()
        _say(f"star-harness {command}: stopping (open encounters are closed, nothing half-done)")
    return 0


def _fanout_label(config: Any) -> str:
    from ..npc import FanoutSettings
    from ..runtime.session.postgres import PostgresTarget

    fanout = getattr(config, "fanout", None)
    if not isinstance(fanout, FanoutSettings):
        return "alone: no --fanout"
    return f"fan-out over {PostgresTarget(fanout.url).describe()}"


def _world_label(world: object) -> str | None:
    """The world row's value for the banner; a database as host:port/db only."""
    from ..runtime.session.postgres import PostgresTarget, is_postgres_url

    if isinstance(world, str) and is_postgres_url(world):
        return PostgresTarget(world).describe()
    return str(world) if world else None


def _default_world(game_spec: str) -> str:
    from ..npc import load_game

    default = load_game(game_spec).default_world_path
    return str(default()) if default is not None else "the game's default world file"


def _log_to_stderr() -> None:
    """Warnings (a model that could not answer, a failing world) go to stderr, one a line."""
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("star-harness: %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("starharness")
    if not logger.handlers:
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _os_error(exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE or "address already in use" in str(exc).lower():
        return (
            f"{exc}; is another server running? choose another --port, or --port 0 for a free one"
        )
    return str(exc)
