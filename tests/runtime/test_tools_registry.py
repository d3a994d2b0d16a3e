"""The tool registry: layers, shadowing, ownership by scopes, stable cached schemas."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from starharness.runtime.kernel import Context
from starharness.runtime.llm.types import ToolCall
from starharness.runtime.tools import (
    TOOLS,
    UNLISTED_TOOLS,
    ToolConflictError,
    ToolDefinition,
    ToolRegistry,
    ToolsConfig,
    ToolsPlugin,
    ordered_names,
    tool,
)


def _echo(name: str, reply: str) -> ToolDefinition[object]:
    @tool(name=name, description=f"Says {reply}.")
    def echo() -> str:
        return reply

    return echo


async def _root() -> tuple[Context, Context]:
    root = Context()
    plugin_ctx = root.fork("tools")
    await ToolsPlugin().setup(plugin_ctx, ToolsConfig())
    return root, plugin_ctx


async def test_plugin_provides_tools_and_disposing_it_removes_the_service() -> None:
    root, plugin_ctx = await _root()
    assert isinstance(root.get(TOOLS), ToolRegistry)
    await plugin_ctx.dispose()
    assert not root.has(TOOLS)


async def test_global_tools_are_seen_by_every_agent() -> None:
    root, _ = await _root()
    root.get(TOOLS).register(_echo("look", "global"))
    one, two = root.child("one"), root.child("two")
    assert [s.name for s in one.get(TOOLS).schemas()] == ["look"]
    assert two.get(TOOLS).get("look") is root.get(TOOLS).get("look")


async def test_agent_tools_are_only_seen_by_that_agent_and_its_children() -> None:
    root, _ = await _root()
    one, two = root.child("one"), root.child("two")
    one.get(TOOLS).register(_echo("secret", "one"))
    sub = one.child("sub")
    assert "secret" in one.get(TOOLS)
    assert "secret" in sub.get(TOOLS)
    assert "secret" not in two.get(TOOLS)
    assert "secret" not in root.get(TOOLS)


async def test_narrower_layers_shadow_wider_ones() -> None:
    root, _ = await _root()
    root.get(TOOLS).register(_echo("look", "global"))
    agent = root.child("agent")
    sub = agent.child("sub")
    agent.get(TOOLS).register(_echo("look", "agent"))
    assert (await sub.get(TOOLS).execute(ToolCall("1", "look", "{}"))).content == "agent"
    sub.get(TOOLS).register(_echo("look", "sub"))
    assert (await sub.get(TOOLS).execute(ToolCall("2", "look", "{}"))).content == "sub"
    assert (await agent.get(TOOLS).execute(ToolCall("3", "look", "{}"))).content == "agent"
    assert (await root.child("other").get(TOOLS).execute(ToolCall("4", "look", "{}"))).content == (
        "global"
    )
    assert [s.name for s in sub.get(TOOLS).schemas()] == ["look"]


async def test_disposing_an_agent_undoes_its_tools_and_uncovers_the_global_one() -> None:
    root, _ = await _root()
    root.get(TOOLS).register(_echo("look", "global"))
    agent = root.child("agent")
    agent.get(TOOLS).register(_echo("look", "agent"))
    agent.get(TOOLS).register(_echo("extra", "agent"))
    await agent.dispose()
    fresh = root.child("fresh")
    assert [s.name for s in fresh.get(TOOLS).schemas()] == ["look"]
    assert (await fresh.get(TOOLS).execute(ToolCall("1", "look", "{}"))).content == "global"


async def test_a_plugin_forked_from_an_agent_registers_on_that_agent() -> None:
    root, _ = await _root()
    agent = root.child("agent")
    helper = agent.fork("helper-plugin")
    helper.get(TOOLS).register(_echo("helper", "x"))
    assert "helper" in agent.get(TOOLS)
    assert "helper" not in root.get(TOOLS)
    await helper.dispose()
    assert "helper" not in agent.get(TOOLS)


async def test_disposing_a_plugin_context_undoes_its_global_tools() -> None:
    root, _ = await _root()
    plugin = root.fork("game")
    plugin.get(TOOLS).register(_echo("a", "1"))
    plugin.get(TOOLS).register(_echo("b", "2"))
    other = root.fork("other")
    other.get(TOOLS).register(_echo("c", "3"))
    await plugin.dispose()
    assert root.get(TOOLS).names() == ["c"]


async def test_the_disposer_removes_early_and_twice_is_harmless() -> None:
    root, _ = await _root()
    dispose = root.get(TOOLS).register(_echo("a", "1"))
    dispose()
    dispose()
    assert root.get(TOOLS).names() == []


async def test_same_name_twice_in_one_layer_is_refused_naming_it() -> None:
    root, _ = await _root()
    root.get(TOOLS).register(_echo("look", "1"))
    with pytest.raises(ToolConflictError, match="'look' is already registered in the global layer"):
        root.fork("p").get(TOOLS).register(_echo("look", "2"))
    agent = root.child("npc")
    agent.get(TOOLS).register(_echo("look", "3"))
    with pytest.raises(ToolConflictError, match="layer of 'npc'"):
        agent.get(TOOLS).register(_echo("look", "4"))


async def test_schemas_are_sorted_by_name_and_cached_until_registrations_change() -> None:
    root, _ = await _root()
    for name in ["zeta", "alpha", "mid"]:
        root.get(TOOLS).register(_echo(name, name))
    agent = root.child("agent")
    first = agent.get(TOOLS).schemas()
    assert [s.name for s in first] == ["alpha", "mid", "zeta"]
    assert agent.get(TOOLS).schemas() is first
    dispose = agent.get(TOOLS).register(_echo("beta", "b"))
    changed = agent.get(TOOLS).schemas()
    assert [s.name for s in changed] == ["alpha", "beta", "mid", "zeta"]
    dispose()
    restored = agent.get(TOOLS).schemas()
    assert [s.name for s in restored] == ["alpha", "mid", "zeta"]
    assert all(a is b for a, b in zip(restored, first, strict=True))


async def test_changes_elsewhere_keep_the_same_schema_tuple() -> None:
    root, _ = await _root()
    root.get(TOOLS).register(_echo("look", "x"))
    one, two = root.child("one"), root.child("two")
    one.get(TOOLS).register(_echo("mine", "x"))
    before = one.get(TOOLS).schemas()
    two.get(TOOLS).register(_echo("theirs", "x"))
    assert one.get(TOOLS).schemas() is before


async def test_unbound_registry_needs_a_context_to_run_calls() -> None:
    registry = ToolRegistry()
    registry.register(_echo("look", "x"))
    with pytest.raises(ValueError, match="pass the calling context"):
        await registry.execute_calls([ToolCall("1", "look", "{}")])
    outcome = await registry.execute(ToolCall("1", "look", "{}"), Context())
    assert outcome.content == "x"


def test_config_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match="max_parallel"):
        ToolsConfig(max_parallel=0)
    with pytest.raises(ValueError, match="unknown_field"):
        ToolsConfig.model_validate({"unknown_field": 1})


# -- tool order (the seed's toolOrder) ---------------------------------------------------------


async def test_the_tool_order_places_listed_tools_around_the_unlisted_ones() -> None:
    root = Context()
    config = ToolsConfig(tool_order=["shell", UNLISTED_TOOLS, "delegate", "not_registered"])
    await ToolsPlugin().setup(root.fork("tools"), config)
    registry = root.get(TOOLS)
    for name in ("read_file", "delegate", "edit_file", "shell", "write_file"):
        registry.register(_echo(name, name))
    agent = root.child("agent")
    agent.get(TOOLS).register(_echo("agent_only", "mine"))
    assert [s.name for s in registry.schemas()] == [
        "shell",
        "edit_file",
        "read_file",
        "write_file",
        "delegate",
    ]
    assert [s.name for s in agent.get(TOOLS).schemas()] == [
        "shell",
        "agent_only",
        "edit_file",
        "read_file",
        "write_file",
        "delegate",
    ]
    assert registry.names() == sorted(registry.names())  # names() stays a sorted listing


def test_without_the_placeholder_unlisted_tools_come_last_and_repeats_are_refused() -> None:
    assert ordered_names(["c", "a", "b"], ["b"]) == ["b", "a", "c"]
    assert ordered_names(["c", "a", "b"], [UNLISTED_TOOLS]) == ["a", "b", "c"]
    with pytest.raises(ValidationError, match="'b' is listed twice"):
        ToolsConfig(tool_order=["b", UNLISTED_TOOLS, "b"])
    with pytest.raises(ValidationError, match="listed twice"):
        ToolsConfig(tool_order=[UNLISTED_TOOLS, UNLISTED_TOOLS])


_NAMES = st.lists(st.sampled_from("abcdefgh"), unique=True)


@given(names=_NAMES, order=_NAMES, placeholder=st.integers(min_value=-1, max_value=8))
def test_an_ordering_is_a_permutation_that_keeps_the_listed_order(
    names: list[str], order: list[str], placeholder: int
) -> None:
    if placeholder >= 0:
        order = [*order[:placeholder], UNLISTED_TOOLS, *order[placeholder:]]
    result = ordered_names(names, order)
    assert sorted(result) == sorted(names)
    listed = [name for name in order if name in names]
    assert [name for name in result if name in order] == listed
    unlisted = [name for name in result if name not in order]
    assert unlisted == sorted(unlisted)
    if unlisted:  # contiguous, where the placeholder stands (or at the end)
        first = result.index(unlisted[0])
        assert result[first : first + len(unlisted)] == unlisted
        before = (
            [n for n in order[: order.index(UNLISTED_TOOLS)] if n in names]
            if (UNLISTED_TOOLS in order)
            else listed
        )
        assert result[:first] == before
