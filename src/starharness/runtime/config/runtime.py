"""Starting a resolved profile: each plugin set up on its own fork of one root Context."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType, TracebackType
from typing import Any

from ..kernel import Context, Plugin
from .errors import PluginStartError
from .profile import ResolvedProfile


class Runtime:
    """A started profile: the root Context plus the plugins, disposed in reverse on `aclose`."""

    __slots__ = ("_plugins", "ctx", "profile")

    def __init__(
        self, ctx: Context, profile: ResolvedProfile, plugins: Mapping[str, Plugin[Any]]
    ) -> None:
        self.ctx = ctx
        self.profile = profile
        self._plugins = MappingProxyType(dict(plugins))

    @property
    def plugins(self) -> Mapping[str, Plugin[Any]]:
        """The started plugin instances by row id, in start order."""
        return self._plugins

    @property
    def closed(self) -> bool:
        return self.ctx.scope.closed

    async def aclose(self) -> None:
        """Dispose every plugin, newest first (safe to call twice)."""
        await self.ctx.dispose()

    async def __aenter__(self) -> Runtime:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


async def start(profile: ResolvedProfile) -> Runtime:
    """Set each row's plugin up in order, each on `root.fork(row.id)`.

    A setup that raises (or is cancelled) disposes the rows already started, newest first;
    the failure becomes a PluginStartError naming the row.
    """
    root = Context("root")
    plugins: dict[str, Plugin[Any]] = {}
    try:
        for row in profile.rows:
            ctx = root.fork(row.id)
            plugin = row.plugin_class()
            try:
                await plugin.setup(ctx, row.config)
            except Exception as exc:
                detail = str(exc) or type(exc).__name__
                raise PluginStartError(
                    f"row {row.id!r} ({row.plugin}) failed to start: {detail}"
                ) from exc
            missing = [key.name for key in row.plugin_class.provides if not ctx.has(key)]
            if missing:
                raise PluginStartError(
                    f"row {row.id!r} ({row.plugin}) declares that it provides "
                    f"{', '.join(map(repr, missing))} but its setup did not provide it"
                )
            plugins[row.id] = plugin
    except BaseException:
        await root.dispose()
        raise
    return Runtime(root, profile, plugins)
