"""The plugin contract: a pydantic Config, the services it needs and provides, and `setup`."""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from .context import Context, ServiceKey


class NoConfig(BaseModel):
    """Config of a plugin that takes none; unknown keys are an error."""

    model_config = ConfigDict(extra="forbid")


ConfigT = TypeVar("ConfigT", bound=BaseModel)


class Plugin(Generic[ConfigT]):
    """Subclass, set `Config`, `inject` and `provides`, and implement `setup`.

    `setup` registers through `ctx` only: everything it registers is undone when the plugin's
    context is disposed. Long-lived resources register their cleanup with `ctx.scope.add`.
    """

    Config: ClassVar[type[BaseModel]] = NoConfig
    inject: ClassVar[tuple[ServiceKey[Any], ...]] = ()
    """Services that must exist before `setup` runs; checked at start with a clear error."""
    provides: ClassVar[tuple[ServiceKey[Any], ...]] = ()
    """Services this plugin provides, so the loader can order rows and explain gaps."""

    async def setup(self, ctx: Context, config: ConfigT) -> None:
        raise NotImplementedError
