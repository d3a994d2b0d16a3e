"""`ctx.get(TOOLS)`: a tool registry in layers (global, then agent layers) with shared schemas."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import StarHarnessError
from ..kernel import Bindable, Context, Disposer, LayeredTable
from ..llm.types import ToolCall, ToolSchema
from .definition import REQUIRES_APPROVAL, ToolDefinition
from .pipeline import PipelineSettings, RunFactory, run_batch, run_call
from .results import ToolOutcome
from .run import CancelSignal, ToolRunContext

_TAG_PREFIX = "tag:"
UNLISTED_TOOLS = "<unlisted-tools>"
"""In a tool order, where every tool the order does not name goes (sorted by name)."""

Layer = Context | None
"""An agent layer's context, or None for the global layer."""


class ToolConflictError(StarHarnessError, ValueError):
    """A tool with that name is already registered in the same layer."""


def check_tool_order(order: Sequence[str]) -> tuple[str, ...]:
    """`order` as given, refused when a name repeats or the placeholder appears twice."""
    seen: set[str] = set()
    for name in order:
        if name in seen:
            raise ValueError(f"tool order: {name!r} is listed twice")
        seen.add(name)
    return tuple(order)


def ordered_names(names: Iterable[str], order: Sequence[str]) -> list[str]:
    """`names` in `order`: listed names where they are listed (those not registered are
    skipped), every other name sorted at `<unlisted-tools>`, or after the listed ones when the
    order has no placeholder."""
    present = set(names)
    listed = [name for name in order if name in present or name == UNLISTED_TOOLS]
    rest = sorted(present - set(order))
    if UNLISTED_TOOLS not in listed:
        return [*listed, *rest]
    at = listed.index(UNLISTED_TOOLS)
    return [*listed[:at], *rest, *listed[at + 1 :]]


class _Resolved:
    """What one chain of layers sees: name -> tool, and schemas in the tool order."""

    __slots__ = ("schemas", "tools", "version")

    def __init__(self) -> None:
        self.version = -1
        self.tools: dict[str, ToolDefinition[Any]] = {}
        self.schemas: tuple[ToolSchema, ...] = ()

    def refresh(
        self, version: int, tools: dict[str, ToolDefinition[Any]], order: Sequence[str]
    ) -> None:
        self.version = version
        self.tools = tools
        schemas = tuple(tools[name].schema for name in ordered_names(tools, order))
        # Keep the old tuple when nothing visible changed, so callers can compare by identity.
        if schemas != self.schemas:
            self.schemas = schemas


class _Store:
    """Every layer's tools, shared by all views of one registry."""

    __slots__ = ("filter_version", "filters", "global_view", "order", "settings", "table")

    def __init__(self, settings: PipelineSettings, order: Sequence[str]) -> None:
        self.settings = settings
        self.order = tuple(order)
        self.table: LayeredTable[ToolDefinition[Any]] = LayeredTable("tool", ToolConflictError)
        self.filters: dict[Layer, frozenset[str]] = {}
        """Agent layers narrowed to these names (they and their children see no others)."""
        self.filter_version = 0
        self.global_view = _Resolved()

    @property
    def version(self) -> int:
        # Both counters only grow, so their sum changes whenever either does.
        return self.table.version + self.filter_version

    def resolve(self, chain: Sequence[Layer], into: _Resolved) -> _Resolved:
        """Refresh `into` for `chain` (widest layer first); agents without tools share one view."""
        table = self.table
        narrow = [self.filters[layer] for layer in chain if layer in self.filters]
        if not narrow and not any(layer is not None and table.has_layer(layer) for layer in chain):
            into = self.global_view
        elif into is self.global_view:
            into = _Resolved()
        version = self.version
        if into.version != version:
            merged = table.merged(chain)
            for names in narrow:
                merged = {name: tool for name, tool in merged.items() if name in names}
            into.refresh(version, merged, self.order)
        return into


class ToolRegistry(Bindable["ToolRegistry"]):
    """`ctx.get(TOOLS)`: register tools, list their schemas, and run calls through the pipeline.

    Bound to a context, it registers into that context's layer (global for plugins, the
    agent's own layer for an agent context) and sees the global layer, then the ancestors'
    layers, then its own; a narrower layer shadows a wider one. Registrations belong to the
    context's scope, so disposing the plugin or agent undoes them.
    """

    __slots__ = ("_chain", "_ctx", "_resolved", "_store")

    def __init__(
        self,
        *,
        default_timeout_s: float | None = 120.0,
        ask: Iterable[str] = (_TAG_PREFIX + REQUIRES_APPROVAL,),
        max_parallel: int = 16,
        tool_order: Sequence[str] = (UNLISTED_TOOLS,),
    ) -> None:
        """`ask` lists tool names and `tag:NAME` entries whose calls need approval;
        `tool_order` is the order of the schemas sent to the model (`ordered_names`)."""
        if max_parallel < 1:
            raise ValueError("max_parallel must be at least 1")
        entries = list(ask)
        settings = PipelineSettings(
            default_timeout_s=default_timeout_s,
            ask_names=frozenset(e for e in entries if not e.startswith(_TAG_PREFIX)),
            ask_tags=frozenset(e[len(_TAG_PREFIX) :] for e in entries if e.startswith(_TAG_PREFIX)),
            max_parallel=max_parallel,
        )
        self._store = _Store(settings, check_tool_order(tool_order))
        self._ctx: Context | None = None
        self._chain: tuple[Layer, ...] = (None,)
        self._resolved = self._store.global_view

    def bind(self, ctx: Context) -> ToolRegistry:
        """The view of this registry that `ctx` sees (the kernel caches it per context)."""
        view = object.__new__(ToolRegistry)
        view._store = self._store
        view._ctx = ctx
        view._chain = (None, *reversed(ctx.layers))
        view._resolved = _Resolved()
        return view

    # -- registration ------------------------------------------------------------------------

    def register(self, tool: ToolDefinition[Any]) -> Disposer:
        """Add `tool` to this context's layer until the returned disposer (or the scope) runs."""
        return self._store.table.add(self._ctx, tool.name, tool)

    def restrict(self, names: Iterable[str]) -> Disposer:
        """Narrow what this agent layer (and layers made from it) sees to `names`."""
        ctx = self._ctx
        layer = ctx.layer if ctx is not None else None
        if ctx is None or layer is None:
            raise ValueError("restrict() narrows an agent's tools: call it on an agent context")
        store = self._store
        allowed = frozenset(names)
        store.filters[layer] = allowed
        store.filter_version += 1

        def remove() -> None:
            if store.filters.get(layer) is allowed:
                del store.filters[layer]
                store.filter_version += 1

        return ctx.scope.add(remove)

    # -- what this context sees --------------------------------------------------------------

    def _view(self) -> _Resolved:
        resolved = self._resolved
        if resolved.version != self._store.version:
            resolved = self._resolved = self._store.resolve(self._chain, resolved)
        return resolved

    def get(self, name: str) -> ToolDefinition[Any] | None:
        return self._view().tools.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._view().tools

    def names(self) -> list[str]:
        return sorted(self._view().tools)

    def schemas(self) -> tuple[ToolSchema, ...]:
        """The visible tools' schemas in the tool order (by name unless configured); the same
        tuple object until they change."""
        return self._view().schemas

    # -- running calls -----------------------------------------------------------------------

    async def execute_calls(
        self,
        calls: Sequence[ToolCall],
        ctx: Context | None = None,
        *,
        session_id: str = "",
        cancel: CancelSignal | None = None,
        run_factory: RunFactory | None = None,
    ) -> list[ToolOutcome]:
        """Run one step's calls; outcomes in call order. Safe calls next to each other overlap.

        Tools are looked up in this view's layers; hooks, approvals and tools get `ctx` (default:
        the bound context). Setting `cancel` stops running calls and fails the ones not started.
        """
        view = self._view()
        make_run = run_factory or self._run_factory(ctx, session_id, cancel)
        tools = [view.tools.get(call.name) for call in calls]
        return await run_batch(calls, tools, make_run, self._store.settings)

    async def execute(
        self,
        call: ToolCall,
        ctx: Context | None = None,
        *,
        session_id: str = "",
        cancel: CancelSignal | None = None,
    ) -> ToolOutcome:
        """Run a single call through the pipeline."""
        run = self._run_factory(ctx, session_id, cancel)(call)
        return await run_call(call, self.get(call.name), run, self._store.settings)

    def _run_factory(
        self, ctx: Context | None, session_id: str, cancel: CancelSignal | None
    ) -> RunFactory:
        run_ctx = ctx if ctx is not None else self._ctx
        if run_ctx is None:
            raise ValueError("pass the calling context: this registry is not bound to one")
        signal = cancel if cancel is not None else CancelSignal()

        def make_run(call: ToolCall) -> ToolRunContext:
            return ToolRunContext(
                call_id=call.id,
                name=call.name,
                ctx=run_ctx,
                session_id=session_id,
                arguments=call.arguments,
                cancel=signal,
            )

        return make_run
