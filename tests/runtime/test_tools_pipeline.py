"""The execution pipeline: every branch from validation to the outcome the model reads."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from starharness.runtime.kernel import Context, Next
from starharness.runtime.llm.types import ToolCall
from starharness.runtime.tools import (
    TOOL_POST_EXECUTE,
    TOOL_PRE_EXECUTE,
    TOOL_RESULT,
    TOOLS,
    FailureCode,
    PostExecute,
    PreExecute,
    ToolFailure,
    ToolOutcome,
    ToolRunContext,
    ToolsConfig,
    ToolsPlugin,
    ToolSuccess,
    tool,
)


class Item(BaseModel):
    name: str
    qty: int


@tool
async def buy(item: str, qty: int) -> dict[str, Any]:
    """Buy something."""
    return {"bought": item, "qty": qty}


@tool
async def basket(items: list[Item]) -> int:
    """Buy several things."""
    return sum(i.qty for i in items)


@tool
async def explode(reason: str) -> None:
    """Always fails."""
    raise RuntimeError(reason)


@tool
async def shout(text: Annotated[str, Field(min_length=1)]) -> str:
    """Upper-case text."""
    return text.upper()


async def _agent(**config: Any) -> Context:
    root = Context()
    await ToolsPlugin().setup(root.fork("tools"), ToolsConfig(**config))
    for definition in (buy, basket, explode, shout):
        root.get(TOOLS).register(definition)
    return root.child("agent")


async def _call(agent: Context, name: str, arguments: str, **kw: Any) -> ToolOutcome:
    [outcome] = await agent.get(TOOLS).execute_calls([ToolCall("c1", name, arguments)], **kw)
    return outcome


# -- results ------------------------------------------------------------------------------------


async def test_success_value_is_shown_as_compact_json() -> None:
    agent = await _agent()
    outcome = await _call(agent, "buy", '{"item": "tea", "qty": 2}')
    assert not outcome.is_error
    assert outcome.content == '{"bought":"tea","qty":2}'
    assert isinstance(outcome.result, ToolSuccess)
    assert outcome.result.value == {"bought": "tea", "qty": 2}
    assert outcome.error_code is None and outcome.traceback is None


async def test_string_results_are_shown_as_they_are() -> None:
    agent = await _agent()
    assert (await _call(agent, "shout", '{"text": "hi \\"you\\""}')).content == 'HI "YOU"'


async def test_tools_may_return_their_own_success_or_failure() -> None:
    @tool
    def custom(fail: bool) -> ToolSuccess | ToolFailure:
        """Custom."""
        if fail:
            return ToolFailure("out of stock", "out_of_stock")
        return ToolSuccess({"ok": True}, "done")

    agent = await _agent()
    agent.get(TOOLS).register(custom)
    ok = await _call(agent, "custom", '{"fail": false}')
    failed = await _call(agent, "custom", '{"fail": true}')
    assert (ok.content, ok.is_error) == ("done", False)
    assert (failed.content, failed.error_code) == ("Error: out of stock", "out_of_stock")


async def test_unknown_tool_is_a_failure_naming_it() -> None:
    agent = await _agent()
    outcome = await _call(agent, "nope", "{}")
    assert outcome.content == "Error: unknown tool 'nope'"
    assert outcome.error_code == FailureCode.UNKNOWN_TOOL


async def test_invalid_argument_type_names_the_field() -> None:
    agent = await _agent()
    outcome = await _call(agent, "buy", '{"item": "tea", "qty": [1]}')
    assert outcome.content == (
        "Error: invalid arguments for buy: field 'qty': Input should be a valid integer"
    )
    assert outcome.error_code == FailureCode.INVALID_ARGS


async def test_missing_extra_and_nested_fields_are_all_named() -> None:
    agent = await _agent()
    missing = await _call(agent, "buy", '{"qty": 1, "colour": "red"}')
    assert missing.content == (
        "Error: invalid arguments for buy: field 'item': Field required; "
        "field 'colour': Extra inputs are not permitted"
    )
    nested = await _call(agent, "basket", '{"items": [{"name": "a", "qty": 1}, {"name": "b"}]}')
    assert nested.content == (
        "Error: invalid arguments for basket: field 'items[1].qty': Field required"
    )


async def test_constraint_violations_name_the_field() -> None:
    agent = await _agent()
    outcome = await _call(agent, "shout", '{"text": ""}')
    assert outcome.content.startswith("Error: invalid arguments for shout: field 'text': ")
    assert "at least 1 character" in outcome.content


async def test_malformed_json_is_refused_clearly() -> None:
    agent = await _agent()
    outcome = await _call(agent, "buy", '{"item": "tea", ')
    assert outcome.content.startswith(
        "Error: invalid arguments for buy: arguments are not valid JSON (Invalid JSON: "
    )
    array = await _call(agent, "buy", "[1, 2]")
    assert array.content == "Error: invalid arguments for buy: Input should be an object"


async def test_a_raising_tool_reaches_the_model_as_error_message_with_traceback_kept() -> None:
    agent = await _agent()
    outcome = await _call(agent, "explode", '{"reason": "boiler pressure"}')
    assert outcome.content == "Error: boiler pressure"
    assert outcome.error_code == FailureCode.TOOL_ERROR
    assert outcome.traceback is not None
    assert "RuntimeError: boiler pressure" in outcome.traceback
    assert "in explode" in outcome.traceback


async def test_an_exception_without_message_is_named_by_its_type() -> None:
    @tool
    def silent() -> None:
        """Fails quietly."""
        raise KeyError

    agent = await _agent()
    agent.get(TOOLS).register(silent)
    assert (await _call(agent, "silent", "{}")).content == "Error: KeyError"


async def test_a_value_that_cannot_be_shown_is_an_invalid_output_failure() -> None:
    @tool
    def opaque() -> object:
        """Returns something unserialisable."""
        return object()

    agent = await _agent()
    agent.get(TOOLS).register(opaque)
    outcome = await _call(agent, "opaque", "{}")
    assert outcome.error_code == FailureCode.INVALID_OUTPUT
    assert outcome.content.startswith(
        "Error: opaque returned a value that cannot be shown to the model: "
    )


# -- pre-execute -------------------------------------------------------------------------------


async def test_pre_execute_can_deny_with_a_reason() -> None:
    agent = await _agent()

    async def guard(check: PreExecute, next_: Next[PreExecute]) -> PreExecute | None:
        if check.tool.name == "buy" and check.args.qty > 5:
            return check.deny("at most 5 at a time")
        return await next_(check)

    agent.on_waterfall(TOOL_PRE_EXECUTE, guard)
    denied = await _call(agent, "buy", '{"item": "tea", "qty": 9}')
    assert denied.content == "Error: buy was denied: at most 5 at a time"
    assert denied.error_code == FailureCode.DENIED
    allowed = await _call(agent, "buy", '{"item": "tea", "qty": 2}')
    assert not allowed.is_error


async def test_pre_execute_veto_blocks_and_other_agents_are_unaffected() -> None:
    agent = await _agent()
    assert agent.parent is not None
    other = agent.parent.child("other")

    async def veto(check: PreExecute, next_: Next[PreExecute]) -> PreExecute | None:
        return None

    agent.on_waterfall(TOOL_PRE_EXECUTE, veto)
    assert (await _call(agent, "shout", '{"text": "a"}')).content == (
        "Error: shout was blocked before it ran"
    )
    assert (await _call(other, "shout", '{"text": "a"}')).content == "A"


async def test_pre_execute_can_rewrite_arguments() -> None:
    agent = await _agent()

    async def quieter(check: PreExecute, next_: Next[PreExecute]) -> PreExecute | None:
        return await next_(check.with_args(type(check.args)(text="rewritten")))

    agent.on_waterfall(TOOL_PRE_EXECUTE, quieter)
    assert (await _call(agent, "shout", '{"text": "a"}')).content == "REWRITTEN"


async def test_a_failing_pre_execute_hook_is_a_failure_not_a_crash() -> None:
    agent = await _agent()

    async def broken(check: PreExecute, next_: Next[PreExecute]) -> PreExecute | None:
        raise ValueError("guard database down")

    agent.on_waterfall(TOOL_PRE_EXECUTE, broken)
    outcome = await _call(agent, "shout", '{"text": "a"}')
    assert outcome.content == "Error: a pre-execute check of shout failed"
    assert outcome.error_code == FailureCode.HOOK_ERROR
    assert outcome.traceback is not None and "guard database down" in outcome.traceback


# -- post-execute ------------------------------------------------------------------------------


async def test_post_execute_can_replace_the_result() -> None:
    agent = await _agent()

    async def trim(post: PostExecute, next_: Next[PostExecute]) -> PostExecute | None:
        if isinstance(post.result, ToolSuccess):
            short = post.result.content[:3]
            return await next_(post.with_result(ToolSuccess(post.result.value, short)))
        return await next_(post)

    agent.on_waterfall(TOOL_POST_EXECUTE, trim)
    assert (await _call(agent, "shout", '{"text": "abcdef"}')).content == "ABC"


async def test_post_execute_sees_failures_and_can_turn_them_into_results() -> None:
    agent = await _agent()

    async def soften(post: PostExecute, next_: Next[PostExecute]) -> PostExecute | None:
        if isinstance(post.result, ToolFailure):
            return post.with_result(ToolSuccess(None, f"(soft) {post.result.message}"))
        return await next_(post)

    agent.on_waterfall(TOOL_POST_EXECUTE, soften)
    outcome = await _call(agent, "explode", '{"reason": "x"}')
    assert (outcome.content, outcome.is_error) == ("(soft) x", False)


async def test_post_execute_veto_withholds_the_result() -> None:
    agent = await _agent()

    async def withhold(post: PostExecute, next_: Next[PostExecute]) -> PostExecute | None:
        return None

    agent.on_waterfall(TOOL_POST_EXECUTE, withhold)
    outcome = await _call(agent, "shout", '{"text": "a"}')
    assert outcome.content == "Error: the result of shout was withheld"
    assert outcome.error_code == FailureCode.WITHHELD


async def test_a_failing_post_execute_hook_is_a_failure() -> None:
    agent = await _agent()

    async def broken(post: PostExecute, next_: Next[PostExecute]) -> PostExecute | None:
        raise RuntimeError("spill store full")

    agent.on_waterfall(TOOL_POST_EXECUTE, broken)
    outcome = await _call(agent, "shout", '{"text": "a"}')
    assert outcome.error_code == FailureCode.HOOK_ERROR
    assert outcome.content == "Error: a post-execute step of shout failed"


async def test_every_outcome_is_reported_through_tool_result() -> None:
    agent = await _agent()
    seen: list[tuple[str, bool]] = []
    agent.on(TOOL_RESULT, lambda outcome: seen.append((outcome.call.id, outcome.is_error)))
    await agent.get(TOOLS).execute_calls(
        [ToolCall("a", "shout", '{"text": "x"}'), ToolCall("b", "nope", "{}")]
    )
    assert seen == [("a", False), ("b", True)]


# -- run context -------------------------------------------------------------------------------


async def test_run_context_carries_the_call_and_can_conclude_and_defer() -> None:
    seen: list[tuple[str, str, str, str]] = []

    @tool
    async def speak(line: str, run: ToolRunContext) -> str:
        """Say a line."""
        seen.append((run.call_id, run.name, run.session_id, run.arguments))
        run.defer_context("the listener nods")
        run.conclude_turn()
        return "said"

    agent = await _agent()
    agent.get(TOOLS).register(speak)
    outcome = await _call(agent, "speak", '{"line": "hello"}', session_id="s-1")
    assert seen == [("c1", "speak", "s-1", '{"line": "hello"}')]
    assert outcome.concludes_turn
    assert outcome.deferred == ("the listener nods",)


async def test_a_failed_call_does_not_conclude_the_turn() -> None:
    @tool
    async def half(run: ToolRunContext) -> str:
        """Concludes, then fails."""
        run.conclude_turn()
        raise RuntimeError("midway")

    agent = await _agent()
    agent.get(TOOLS).register(half)
    outcome = await _call(agent, "half", "{}")
    assert outcome.is_error and not outcome.concludes_turn


async def test_a_custom_run_factory_is_used() -> None:
    @tool
    async def whoami(run: ToolRunContext) -> str:
        """Session id."""
        return run.session_id

    agent = await _agent()
    agent.get(TOOLS).register(whoami)

    def factory(call: ToolCall) -> ToolRunContext:
        return ToolRunContext(call_id=call.id, name=call.name, ctx=agent, session_id="made")

    [outcome] = await agent.get(TOOLS).execute_calls(
        [ToolCall("1", "whoami", "{}")], run_factory=factory
    )
    assert outcome.content == "made"
