"""The Context: a tree of scopes that plugins extend with services, events and effects."""

from __future__ import annotations

from typing import Any, Generic, TypeVar, cast

from ..errors import StarHarnessError
from .effects import Disposer, Scope
from .events import Event, EventBus, Hook, HookListener, Listener, Waterfall, WaterfallListener

T = TypeVar("T")
R = TypeVar("R")
V_co = TypeVar("V_co", covariant=True)


class ServiceKey(Generic[T]):
    """A typed name for a service: `ctx.get(TOOLS)` is a `ToolRegistry`."""

    __slots__ = ("doc", "name", "provider")

    def __init__(self, name: str, doc: str = "", *, provider: str = "") -> None:
        self.name = name
        self.doc = doc
        # "module:Class" of the plugin that provides it, for "add a row with ..." hints.
        self.provider = provider

    def __repr__(self) -> str:
        return f"ServiceKey({self.name!r})"


class MissingServiceError(StarHarnessError, LookupError):
    """A service was asked for that no plugin provides."""


class ServiceConflictError(StarHarnessError, RuntimeError):
    """Two plugins tried to provide the same service in the same scope."""


class Bindable(Generic[V_co]):
    """Base of a service that hands each context its own view (to own registrations or shadow
    them); only subclasses are bound, so a service with an unrelated `bind` is left alone."""

    __slots__ = ()

    def bind(self, ctx: Context) -> V_co:
        raise NotImplementedError


class Context:
    """Plugins see the world through a Context: services, typed events and a scope of effects.

    `fork()` gives a plugin its own scope over the same services and listeners; `child()` gives
    an agent a layer of its own whose registrations shadow the wider ones and vanish with it.
    """

    __slots__ = ("_services", "_views", "events", "layer", "name", "parent", "scope")

    def __init__(
        self,
        name: str = "root",
        *,
        parent: Context | None = None,
        layer: Context | None = None,
        services: dict[str, Any] | None = None,
        events: EventBus | None = None,
    ) -> None:
        self.name = name
        self.parent = parent
        # The agent layer this context belongs to: None for the global (plugin) layer.
        self.layer = layer
        self.scope = Scope(name)
        self.events = events if events is not None else EventBus()
        self._services: dict[str, Any] = services if services is not None else {}
        # key name -> (the service a view was made from, the view): a view is reused only while
        # that same service is still the one provided, so a disposed provider's view is never
        # handed out again.
        self._views: dict[str, tuple[object, Any]] = {}

    # -- structure -------------------------------------------------------------------------

    def fork(self, name: str) -> Context:
        """A plugin's context: same services and listeners, its own scope, undone on dispose."""
        forked = Context(
            name, parent=self, layer=self.layer, services=self._services, events=self.events
        )
        self.scope.adopt(forked.scope)
        return forked

    def child(self, name: str) -> Context:
        """An agent's context: a new layer whose services and listeners shadow the parent's."""
        layer = Context(name, parent=self, services={}, events=EventBus(self.events))
        layer.layer = layer
        self.scope.adopt(layer.scope)
        return layer

    @property
    def layers(self) -> list[Context]:
        """Agent layers from this one outwards (empty for the global layer)."""
        found: list[Context] = []
        ctx: Context | None = self
        while ctx is not None:
            if ctx.layer is ctx:
                found.append(ctx)
            ctx = ctx.parent
        return found

    async def dispose(self) -> None:
        """Undo everything registered through this context, newest first."""
        await self.scope.aclose()

    # -- services --------------------------------------------------------------------------

    def provide(self, key: ServiceKey[T], service: T) -> Disposer:
        """Make `service` available as `key` in this layer until the disposer runs."""
        if key.name in self._services:
            raise ServiceConflictError(f"service {key.name!r} is already provided in {self.name!r}")
        self._services[key.name] = service
        return self.scope.add(_Withdrawal(self._services, key.name, service))

    def _lookup(self, name: str) -> Any | None:
        ctx: Context | None = self
        while ctx is not None:
            found = ctx._services.get(name)
            if found is not None:
                return found
            # Forks share their parent's table, so skip straight to the next distinct table.
            parent = ctx.parent
            while parent is not None and parent._services is ctx._services:
                parent = parent.parent
            ctx = parent
        return None

    def maybe(self, key: ServiceKey[T]) -> T | None:
        """The service for `key` as seen from this context, or None."""
        # Any, not cast(): every service lookup of every agent comes through here, and cast is
        # a Python call.
        service = self._lookup(key.name)
        if service is None:
            return None
        if not isinstance(service, Bindable):
            return service
        cached = self._views.get(key.name)
        if cached is not None and cached[0] is service:
            return cached[1]
        # A string: `Bindable[T]` evaluated at run time would cost a typing-cache lookup per view.
        view = cast("Bindable[T]", service).bind(self)
        self._views[key.name] = (service, view)
        return view

    def get(self, key: ServiceKey[T]) -> T:
        """The service for `key`; raises MissingServiceError naming it when none is provided."""
        service = self.maybe(key)
        if service is None:
            hint = f" ({key.doc})" if key.doc else ""
            raise MissingServiceError(f"no plugin provides the service {key.name!r}{hint}")
        return service

    def has(self, key: ServiceKey[Any]) -> bool:
        return self._lookup(key.name) is not None

    # -- events (registrations are owned by this context's scope) ---------------------------

    def on(self, event: Event[T], listener: Listener[T]) -> Disposer:
        return self.scope.add(self.events.on(event, listener))

    def on_hook(self, hook: Hook[T, R], listener: HookListener[T, R]) -> Disposer:
        return self.scope.add(self.events.on_hook(hook, listener))

    def on_waterfall(self, hook: Waterfall[T], listener: WaterfallListener[T]) -> Disposer:
        return self.scope.add(self.events.on_waterfall(hook, listener))

    def emit(self, event: Event[T], payload: T) -> None:
        self.events.emit(event, payload)


class _Withdrawal:
    """Takes a provided service back if it is still the one provided (one per `provide`)."""

    __slots__ = ("_name", "_service", "_table")

    def __init__(self, table: dict[str, Any], name: str, service: object) -> None:
        self._table = table
        self._name = name
        self._service = service

    def __call__(self) -> None:
        if self._table.get(self._name) is self._service:
            del self._table[self._name]
