"""The prompt service: ordering, layers and shadowing, strict variables, byte stability."""

from __future__ import annotations

import pytest

from starharness.runtime.kernel import Context
from starharness.runtime.prompt import (
    PROMPT,
    PromptConfig,
    PromptError,
    PromptPlugin,
    PromptService,
)

IDENTITY = "You are an AI agent powered by star-harness."


async def _root(**config: object) -> tuple[Context, Context]:
    root = Context()
    plugin_ctx = root.fork("prompt")
    await PromptPlugin().setup(plugin_ctx, PromptConfig.model_validate(config))
    return root, plugin_ctx


async def test_plugin_adds_the_harness_identity_and_persona() -> None:
    root, _ = await _root(persona="You run the bakery.")
    agent = root.child("a")
    assert agent.get(PROMPT).assemble(agent) == f"{IDENTITY}\n\nYou run the bakery."
    assert agent.get(PROMPT).section_names() == ["harness.identity", "persona"]


async def test_identity_can_be_left_out_or_replaced() -> None:
    root, _ = await _root(include_harness_identity=False)
    agent = root.child("a")
    assert agent.get(PROMPT).assemble() == ""
    root2, _ = await _root(identity="You are a test rig.")
    assert root2.child("a").get(PROMPT).assemble() == "You are a test rig."


async def test_disposing_the_plugin_removes_service_and_sections() -> None:
    root, plugin_ctx = await _root()
    await plugin_ctx.dispose()
    assert not root.has(PROMPT)


async def test_sections_are_ordered_by_order_then_name() -> None:
    root, _ = await _root(include_harness_identity=False)
    root.get(PROMPT).section("tools.b", 100, "B")
    root.get(PROMPT).section("tools.a", 100, "A")
    root.get(PROMPT).section("persona", 0, "P")
    root.get(PROMPT).section("identity", -100, "I")
    root.get(PROMPT).section("late", 150.5, "L")
    agent = root.child("agent")
    assert agent.get(PROMPT).assemble() == "I\n\nP\n\nA\n\nB\n\nL"


async def test_agent_sections_shadow_global_ones_and_vanish_with_the_agent() -> None:
    root, _ = await _root(persona="global persona")
    agent = root.child("npc")
    agent.get(PROMPT).section("persona", 0, "npc persona")
    agent.get(PROMPT).section("npc.rules", 50, "npc rules")
    other = root.child("other")
    assert agent.get(PROMPT).assemble() == f"{IDENTITY}\n\nnpc persona\n\nnpc rules"
    assert other.get(PROMPT).assemble() == f"{IDENTITY}\n\nglobal persona"
    sub = agent.child("sub")
    assert sub.get(PROMPT).assemble() == agent.get(PROMPT).assemble()
    await agent.dispose()
    assert root.child("fresh").get(PROMPT).assemble() == f"{IDENTITY}\n\nglobal persona"


async def test_a_shadowing_section_takes_its_own_order() -> None:
    root, _ = await _root(include_harness_identity=False)
    root.get(PROMPT).section("a", 1, "first")
    root.get(PROMPT).section("b", 2, "second")
    agent = root.child("x")
    agent.get(PROMPT).section("a", 3, "moved last")
    assert agent.get(PROMPT).assemble() == "second\n\nmoved last"


async def test_same_name_twice_in_one_layer_is_refused() -> None:
    root, _ = await _root()
    with pytest.raises(PromptError, match=r"section 'harness\.identity' is already registered"):
        root.get(PROMPT).section("harness.identity", -100, "again")


async def test_variables_are_interpolated_and_agent_variables_shadow_global_ones() -> None:
    root, _ = await _root(persona="You are {{name}}, {{ role }}.")
    root.get(PROMPT).variable("name", "Ada")
    root.get(PROMPT).variable("role", lambda ctx: f"keeper of {ctx.name}")
    agent = root.child("lighthouse")
    assert agent.get(PROMPT).assemble().endswith("You are Ada, keeper of lighthouse.")
    agent.get(PROMPT).variable("name", "Bea")
    assert agent.get(PROMPT).assemble().endswith("You are Bea, keeper of lighthouse.")


async def test_an_unknown_variable_is_an_error_naming_it_and_the_section() -> None:
    root, _ = await _root(persona="Hello {{nobody}}.")
    agent = root.child("a")
    with pytest.raises(PromptError, match=r"unknown variable \{\{nobody\}\} in section 'persona'"):
        agent.get(PROMPT).assemble()


async def test_text_that_only_looks_like_braces_is_left_alone() -> None:
    root, _ = await _root(include_harness_identity=False)
    root.get(PROMPT).section("json", 0, 'Reply like {"a": {"b": 1}} or {{ "x" }}.')
    assert root.child("a").get(PROMPT).assemble() == 'Reply like {"a": {"b": 1}} or {{ "x" }}.'


async def test_callable_sections_get_the_agent_context_and_are_used_verbatim() -> None:
    root, _ = await _root(include_harness_identity=False)
    root.get(PROMPT).section("who", 0, lambda ctx: f"agent {ctx.name} {{{{raw}}}}")
    root.get(PROMPT).section("nothing", 1, lambda ctx: None)
    assert root.child("a1").get(PROMPT).assemble() == "agent a1 {{raw}}"


async def test_assembly_returns_the_identical_string_while_nothing_changes() -> None:
    root, _ = await _root(persona="persona of {{name}}")
    root.get(PROMPT).variable("name", "Ada")
    agent = root.child("a")
    first = agent.get(PROMPT).assemble(agent)
    assert agent.get(PROMPT).assemble(agent) is first
    # A change in another agent's layer leaves this agent's prompt object as it was.
    root.child("b").get(PROMPT).section("other", 5, "other")
    assert agent.get(PROMPT).assemble(agent) is first
    agent.get(PROMPT).section("extra", 10, "extra")
    changed = agent.get(PROMPT).assemble(agent)
    assert changed == first + "\n\nextra"


async def test_dynamic_sections_keep_the_same_object_while_their_output_is_equal() -> None:
    root, _ = await _root(include_harness_identity=False)
    mood = ["calm"]
    root.get(PROMPT).section("mood", 0, lambda ctx: f"Mood: {mood[0]}.")
    agent = root.child("a")
    first = agent.get(PROMPT).assemble()
    assert agent.get(PROMPT).assemble() is first
    mood[0] = "angry"
    second = agent.get(PROMPT).assemble()
    assert second == "Mood: angry."
    assert agent.get(PROMPT).assemble() is second


async def test_assemble_with_another_context_uses_that_context_s_view() -> None:
    root, _ = await _root(include_harness_identity=False)
    agent = root.child("a")
    agent.get(PROMPT).section("mine", 0, "mine")
    assert root.get(PROMPT).assemble(agent) == "mine"
    assert root.get(PROMPT).assemble(agent) is agent.get(PROMPT).assemble()


async def test_render_context_joins_dynamic_providers_in_order() -> None:
    root, _ = await _root()
    agent = root.child("npc")
    assert agent.get(PROMPT).render_context(agent) is None
    tick = [0]
    root.get(PROMPT).context("clock", 10, lambda ctx: f"tick {tick[0]}")
    agent.get(PROMPT).context("scene", 0, "Scene for {{who}}.")
    agent.get(PROMPT).context("empty", 5, lambda ctx: "")
    agent.get(PROMPT).variable("who", "npc")
    assert agent.get(PROMPT).render_context(agent) == "Scene for npc.\n\ntick 0"
    tick[0] = 1
    assert agent.get(PROMPT).render_context(agent) == "Scene for npc.\n\ntick 1"
    assert "Scene" not in agent.get(PROMPT).assemble(agent)


async def test_render_context_is_none_when_every_provider_is_empty() -> None:
    root, _ = await _root()
    root.get(PROMPT).context("quiet", 0, lambda ctx: None)
    assert root.child("a").get(PROMPT).render_context() is None


async def test_unknown_variable_in_a_context_names_the_context() -> None:
    root, _ = await _root()
    root.get(PROMPT).context("scene", 0, "at {{place}}")
    with pytest.raises(PromptError, match=r"\{\{place\}\} in context 'scene'"):
        root.child("a").get(PROMPT).render_context()


async def test_disposers_remove_sections_contexts_and_variables() -> None:
    root, _ = await _root(include_harness_identity=False)
    agent = root.child("a")
    remove_section = agent.get(PROMPT).section("s", 0, "{{v}}")
    remove_variable = agent.get(PROMPT).variable("v", "value")
    remove_context = agent.get(PROMPT).context("c", 0, "ctx")
    assert agent.get(PROMPT).assemble() == "value"
    remove_variable()
    with pytest.raises(PromptError, match="unknown variable"):
        agent.get(PROMPT).assemble()
    remove_section()
    remove_context()
    assert agent.get(PROMPT).assemble() == ""
    assert agent.get(PROMPT).render_context() is None


def test_an_unbound_service_needs_a_context() -> None:
    service = PromptService()
    service.section("s", 0, "text")
    with pytest.raises(PromptError, match="pass the agent's context"):
        service.assemble()
    assert service.assemble(Context()) == "text"


def test_config_refuses_unknown_fields() -> None:
    with pytest.raises(ValueError, match="personna"):
        PromptConfig.model_validate({"personna": "x"})


async def test_agents_without_own_sections_share_one_prompt_string() -> None:
    root, _ = await _root(persona="shared persona")
    one, two = root.child("one"), root.child("two")
    assert one.get(PROMPT).assemble() is two.get(PROMPT).assemble()


async def test_an_agent_with_own_sections_keeps_its_string_across_changes_elsewhere() -> None:
    root, _ = await _root()
    agent = root.child("npc")
    agent.get(PROMPT).section("persona", 0, "npc persona {{mood}}")
    agent.get(PROMPT).variable("mood", lambda ctx: "calm")
    first = agent.get(PROMPT).assemble()
    root.child("other").get(PROMPT).section("theirs", 0, "theirs")
    root.get(PROMPT).context("clock", 0, "noon")
    assert agent.get(PROMPT).assemble() is first
    assert first == f"{IDENTITY}\n\nnpc persona calm"
