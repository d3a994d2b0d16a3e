"""The kernel: scopes undo in reverse, services and layers, the four dispatch modes."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from starharness.runtime.kernel import (
    Bindable,
    Context,
    Event,
    Hook,
    MissingServiceError,
    Next,
    Scope,
    ScopeDisposedError,
    ServiceConflictError,
    ServiceKey,
    Waterfall,
)

NUMBER: ServiceKey[int] = ServiceKey("number", "add the number plugin")
PING: Event[str] = Event("test/ping")


async def test_scope_undoes_in_reverse_order_and_is_idempotent() -> None:
    order: list[str] = []
    scope = Scope("s")
    scope.add(lambda: order.append("first"))
    scope.add(lambda: order.append("second"))

    async def async_cleanup() -> None:
        order.append("third")

    scope.add(async_cleanup)
    await scope.aclose()
    await scope.aclose()
    assert order == ["third", "second", "first"]
    with pytest.raises(ScopeDisposedError):
        scope.add(lambda: None)


async def test_a_failing_cleanup_does_not_stop_the_others(caplog: pytest.LogCaptureFixture) -> None:
    order: list[str] = []
    scope = Scope("s")
    scope.add(lambda: order.append("kept"))

    def boom() -> None:
        raise RuntimeError("boom")

    scope.add(boom)
    with caplog.at_level(logging.ERROR):
        await scope.aclose()
    assert order == ["kept"]
    assert "cleanup failed" in caplog.text


async def test_early_dispose_runs_once() -> None:
    calls: list[int] = []
    scope = Scope("s")
    dispose = scope.add(lambda: calls.append(1))
    dispose()
    dispose()
    await scope.aclose()
    assert calls == [1]


async def test_a_closed_child_leaves_its_owner() -> None:
    # A long-lived root with an agent layer per encounter must not keep the closed ones.
    root = Context()
    plugin = root.fork("plugin")
    before = len(root.scope)
    for index in range(100):
        agent = root.child(f"agent {index}")
        assert len(root.scope) == before + 1
        await agent.dispose()
        assert len(root.scope) == before
    await plugin.dispose()
    assert len(root.scope) == before - 1


async def test_an_owner_closes_its_open_children_newest_first() -> None:
    order: list[str] = []
    owner = Scope("owner")
    owner.add(lambda: order.append("owner's own"))
    first, second = Scope("first"), Scope("second")
    owner.adopt(first)
    owner.adopt(second)
    first.add(lambda: order.append("first"))
    second.add(lambda: order.append("second"))
    with pytest.raises(ValueError, match="already has an owner"):
        Scope("other").adopt(first)
    await owner.aclose()
    assert order == ["second", "first", "owner's own"]
    assert first.closed and second.closed
    with pytest.raises(ScopeDisposedError, match="'first' is already disposed"):
        Scope("other").adopt(first)


async def test_a_disposer_forgets_only_its_own_registration() -> None:
    calls: list[str] = []
    scope = Scope("s")

    def cleanup() -> None:
        calls.append("ran")

    dispose_one = scope.add(cleanup)
    scope.add(cleanup)  # the same callable twice: two registrations
    dispose_one()
    assert calls == ["ran"] and len(scope) == 1
    dispose_one()
    assert len(scope) == 1
    await scope.aclose()
    assert calls == ["ran", "ran"] and len(scope) == 0


async def test_disposing_a_plugin_fork_undoes_its_services_and_listeners() -> None:
    root = Context()
    plugin = root.fork("plugin")
    plugin.provide(NUMBER, 7)
    seen: list[str] = []
    plugin.on(PING, seen.append)
    assert root.get(NUMBER) == 7
    root.emit(PING, "a")
    await plugin.dispose()
    root.emit(PING, "b")
    assert seen == ["a"]
    assert root.maybe(NUMBER) is None
    with pytest.raises(MissingServiceError, match=r"'number'.*add the number plugin"):
        root.get(NUMBER)


async def test_a_service_can_be_provided_once_per_layer() -> None:
    root = Context()
    root.provide(NUMBER, 1)
    with pytest.raises(ServiceConflictError):
        root.fork("other").provide(NUMBER, 2)
    agent = root.child("agent")
    agent.provide(NUMBER, 3)  # an agent layer may shadow
    assert agent.get(NUMBER) == 3
    assert root.get(NUMBER) == 1
    await agent.dispose()
    assert root.get(NUMBER) == 1


async def test_child_layer_sees_parent_listeners_but_not_the_reverse() -> None:
    root = Context()
    agent = root.child("agent")
    seen: list[str] = []
    root.on(PING, lambda p: seen.append(f"root:{p}"))
    agent.on(PING, lambda p: seen.append(f"agent:{p}"))
    agent.emit(PING, "x")
    root.emit(PING, "y")
    assert seen == ["agent:x", "root:x", "root:y"]
    assert agent.layers == [agent]
    assert root.layers == []


class _Recorder(Bindable[str]):
    """A Bindable service: each context gets a view that knows it."""

    def __init__(self) -> None:
        self.bound: list[str] = []

    def bind(self, ctx: Context) -> str:
        self.bound.append(ctx.name)
        return f"view-for-{ctx.name}"


async def test_bindable_services_get_one_view_per_context() -> None:
    root = Context()
    recorder = _Recorder()
    key: ServiceKey[object] = ServiceKey("recorder")
    root.provide(key, recorder)
    plugin = root.fork("p")
    assert plugin.get(key) == "view-for-p"
    assert plugin.get(key) == "view-for-p"
    assert recorder.bound == ["p"]


class _Listener:
    """Not Bindable, though it has a `bind` of its own (like a server socket's)."""

    def __init__(self) -> None:
        self.address: tuple[str, int] | None = None

    def bind(self, host: str, port: int) -> None:
        self.address = (host, port)


async def test_a_service_with_an_unrelated_bind_is_returned_as_is() -> None:
    root = Context()
    listener = _Listener()
    key: ServiceKey[_Listener] = ServiceKey("listener")
    root.provide(key, listener)
    agent = root.child("agent")
    assert agent.get(key) is listener
    assert root.fork("p").get(key) is listener
    assert listener.address is None


async def test_a_disposed_providers_view_is_never_returned() -> None:
    root = Context()
    key: ServiceKey[object] = ServiceKey("recorder")
    plugin = root.fork("plugin")
    first = _Recorder()
    plugin.provide(key, first)
    agent = root.child("agent")
    assert agent.get(key) == "view-for-agent"
    await plugin.dispose()
    assert root.maybe(key) is None
    assert not agent.has(key)
    assert agent.maybe(key) is None
    second = _Recorder()
    root.fork("plugin2").provide(key, second)
    assert agent.get(key) == "view-for-agent"
    assert first.bound == ["agent"]
    assert second.bound == ["agent"]


async def test_emit_logs_a_failing_listener_and_still_calls_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    root = Context()
    seen: list[str] = []

    def bad(_: str) -> None:
        raise ValueError("listener broke")

    root.on(PING, bad)
    root.on(PING, seen.append)
    with caplog.at_level(logging.ERROR):
        root.emit(PING, "x")
    assert seen == ["x"]
    assert "listener of test/ping failed" in caplog.text


async def test_emit_refuses_async_listeners_instead_of_never_awaiting_them(
    caplog: pytest.LogCaptureFixture,
) -> None:
    root = Context()
    ran: list[str] = []

    async def later(value: str) -> None:
        ran.append(value)

    class Handler:
        async def __call__(self, value: str) -> None:
            ran.append(value)

    for listener in (later, Handler()):
        with pytest.raises(TypeError, match="is async, and emit never awaits"):
            root.on(PING, listener)  # type: ignore[arg-type]
    # A plain function that returns a coroutine gets past `on`: emit logs it, closes the
    # coroutine (no "never awaited" warning) and still calls the other listeners.
    root.on(PING, lambda value: later(value))  # type: ignore[arg-type, return-value]
    root.on(PING, ran.append)
    with caplog.at_level(logging.ERROR):
        root.emit(PING, "x")
    assert ran == ["x"]
    assert "returned an awaitable; emit does not await" in caplog.text


async def test_serial_and_bail() -> None:
    root = Context()
    hook: Hook[int, str] = Hook("test/hook")
    order: list[str] = []

    async def first(n: int) -> str | None:
        order.append("first")
        return None

    async def second(n: int) -> str | None:
        order.append("second")
        return f"answer {n}"

    async def third(n: int) -> str | None:
        order.append("third")
        return "never"

    root.on_hook(hook, first)
    root.on_hook(hook, second)
    root.on_hook(hook, third)
    assert await root.events.bail(hook, 4) == "answer 4"
    assert order == ["first", "second"]
    order.clear()
    await root.events.serial(hook, 1)
    assert order == ["first", "second", "third"]

    async def raises(n: int) -> str | None:
        raise RuntimeError("serial propagates")

    root.on_hook(hook, raises)
    with pytest.raises(RuntimeError, match="serial propagates"):
        await root.events.serial(hook, 1)


async def test_waterfall_rewrites_and_vetoes() -> None:
    root = Context()
    chain: Waterfall[int] = Waterfall("test/chain")

    async def double(v: int, next_: Next[int]) -> int | None:
        return await next_(v * 2)

    async def add_one(v: int, next_: Next[int]) -> int | None:
        return await next_(v + 1)

    root.on_waterfall(chain, double)
    dispose = root.on_waterfall(chain, add_one)
    assert await root.events.waterfall(chain, 5) == 11

    async def veto_odd(v: int, next_: Next[int]) -> int | None:
        return None if v % 2 else await next_(v)

    dispose()
    root.on_waterfall(chain, veto_odd)
    assert await root.events.waterfall(chain, 3) == 6
    empty: Waterfall[int] = Waterfall("test/empty")
    assert await root.events.waterfall(empty, 9) == 9

    reached: list[int] = []

    async def never_reached(v: int, next_: Next[int]) -> int | None:
        reached.append(v)
        return await next_(v)

    async def veto_all(v: int, next_: Next[int]) -> int | None:
        return None

    outer = root.fork("outer")
    outer.on_waterfall(chain, veto_all)
    outer.on_waterfall(chain, never_reached)
    assert await root.events.waterfall(chain, 3) is None
    assert reached == []
    await outer.dispose()
    assert await root.events.waterfall(chain, 3) == 6


async def test_listeners_are_seen_down_every_layer_and_gone_with_their_layer() -> None:
    root = Context()
    agent = root.child("agent")
    nested = agent.child("nested")
    assert not nested.events.has_listeners(PING)
    dispose = root.on(PING, lambda p: None)
    assert nested.events.has_listeners(PING) and agent.events.has_listeners(PING)
    dispose()
    nested.on(PING, lambda p: None)
    assert nested.events.has_listeners(PING)
    assert not agent.events.has_listeners(PING) and not root.events.has_listeners(PING)
    await nested.dispose()
    assert not nested.events.has_listeners(PING)


def _on_once(ctx: Context, seen: list[str], label: str) -> None:
    """A listener that records one call, then unsubscribes itself while being called."""
    disposer: list[Any] = []

    def once(p: str) -> None:
        seen.append(f"{label}:{p}")
        disposer[0]()

    disposer.append(ctx.on(PING, once))


async def test_a_listener_may_unsubscribe_while_an_emit_calls_it() -> None:
    root = Context()
    agent = root.child("agent")
    seen: list[str] = []
    _on_once(agent, seen, "once")
    agent.on(PING, lambda p: seen.append(f"agent:{p}"))
    root.on(PING, lambda p: seen.append(f"root:{p}"))
    agent.emit(PING, "x")
    agent.emit(PING, "y")
    assert seen == ["once:x", "agent:x", "root:x", "agent:y", "root:y"]
    alone = Context()  # a bus without a parent hands out its own bucket: still copied
    _on_once(alone, seen, "first")
    alone.on(PING, lambda p: seen.append(f"second:{p}"))
    seen.clear()
    alone.emit(PING, "z")
    alone.emit(PING, "w")
    assert seen == ["first:z", "second:z", "second:w"]
