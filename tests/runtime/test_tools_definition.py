"""Tool definitions: schemas from type hints or a pydantic model, descriptions, bad definitions."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from starharness.runtime.kernel import Context
from starharness.runtime.llm.types import ToolCall
from starharness.runtime.tools import (
    ToolArgsError,
    ToolDefinitionError,
    ToolRegistry,
    ToolRunContext,
    define_raw_tool,
    define_tool,
    tool,
)


@tool
async def buy(
    item: Annotated[str, Field(description="What to buy")],
    qty: Annotated[int, Field(ge=1)] = 1,
    mode: Literal["cash", "credit"] = "cash",
) -> dict[str, Any]:
    """Buy an item from the shop.

    The second paragraph is for humans and is left out of the description.
    """
    return {"item": item, "qty": qty, "mode": mode}


def test_decorator_builds_the_schema_from_type_hints() -> None:
    params = dict(buy.schema.parameters)
    assert params == {
        "type": "object",
        "properties": {
            "item": {"type": "string", "description": "What to buy"},
            "qty": {"type": "integer", "minimum": 1, "default": 1},
            "mode": {"type": "string", "enum": ["cash", "credit"], "default": "cash"},
        },
        "required": ["item"],
        "additionalProperties": False,
    }
    assert buy.name == "buy"
    assert buy.schema.name == "buy"


def test_description_is_the_first_docstring_paragraph_joined_on_one_line() -> None:
    @tool
    def look(target: str) -> str:
        """Look closely at
        something nearby.

        Not this part.
        """
        return target

    assert look.description == "Look closely at something nearby."
    assert look.schema.description == look.description


def test_decorator_options_override_name_description_and_flags() -> None:
    @tool(name="peek", description="Peek.", timeout_s=3, concurrency_safe=True, tags=["ro"])
    def look(target: str) -> str:
        return target

    assert (look.name, look.description, look.timeout_s) == ("peek", "Peek.", 3)
    assert look.concurrency_safe
    assert look.tags == frozenset({"ro"})


def test_schema_is_built_once_and_shared() -> None:
    first = Context()
    registry = ToolRegistry()
    first_view = registry.bind(first.child("a"))
    second_view = registry.bind(first.child("b"))
    registry.register(buy)
    assert first_view.schemas()[0] is second_view.schemas()[0] is buy.schema


class Order(BaseModel):
    """An order (this docstring must not leak into the schema)."""

    item: str
    qty: int = Field(default=1, description="How many")


def test_decorator_with_a_pydantic_model_passes_the_instance() -> None:
    @tool(parameters=Order)
    async def order(args: Order, run: ToolRunContext) -> str:
        """Place an order."""
        return f"{args.item} x{args.qty} for {run.session_id}"

    assert order.args_model is Order
    assert order.schema.parameters["properties"]["qty"] == {
        "type": "integer",
        "default": 1,
        "description": "How many",
    }
    assert "description" not in order.schema.parameters
    assert "title" not in order.schema.parameters


async def test_model_tool_and_run_context_reach_the_function() -> None:
    @tool(parameters=Order)
    async def order(args: Order, run: ToolRunContext) -> str:
        """Place an order."""
        return f"{args.item} x{args.qty} for {run.session_id}"

    registry = ToolRegistry()
    registry.register(order)
    outcome = await registry.execute(
        ToolCall("c1", "order", '{"item": "tea"}'), Context(), session_id="s-9"
    )
    assert outcome.content == "tea x1 for s-9"


async def test_sync_tools_and_optional_run_context_parameters_work() -> None:
    seen: list[str] = []

    @tool
    def note(text: str, run: ToolRunContext | None = None) -> str:
        """Write a note."""
        assert run is not None
        seen.append(run.call_id)
        return text.upper()

    assert "run" not in note.schema.parameters["properties"]
    registry = ToolRegistry()
    registry.register(note)
    outcome = await registry.execute(ToolCall("c7", "note", '{"text": "hi"}'), Context())
    assert (outcome.content, seen) == ("HI", ["c7"])


def test_define_tool_with_a_model() -> None:
    async def run_order(args: Order, run: ToolRunContext) -> str:
        return args.item

    definition = define_tool("order", "  Place an order.  ", Order, run_order, tags=["mutating"])
    assert definition.description == "Place an order."
    assert definition.tags == frozenset({"mutating"})
    assert definition.parse('{"item": "x"}') == Order(item="x")
    with pytest.raises(ValidationError, match="item"):
        definition.parse("")


def test_empty_arguments_mean_no_arguments() -> None:
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    assert ping.parse("") is not None
    assert json.loads(json.dumps(ping.schema.parameters))["properties"] == {}


def test_raw_tool_keeps_its_own_copy_of_the_schema() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}}

    def parse(raw: str) -> int:
        value = json.loads(raw or "{}").get("n")
        if not isinstance(value, int):
            raise ToolArgsError("field 'n': must be an integer")
        return value

    async def run(n: int, run: ToolRunContext) -> int:
        return n * 2

    definition = define_raw_tool("double", "Double a number.", schema, parse, run)
    schema["properties"]["n"]["type"] = "string"
    assert definition.schema.parameters["properties"]["n"]["type"] == "integer"


@pytest.mark.parametrize("name", ["", "has space", "x" * 65, "dots.not.allowed"])
def test_bad_tool_names_are_refused(name: str) -> None:
    with pytest.raises(ToolDefinitionError, match="invalid tool name"):

        @tool(name=name, description="d")
        def anything() -> None:
            return None


def test_missing_description_is_refused_naming_the_tool() -> None:
    with pytest.raises(ToolDefinitionError, match="tool 'silent' needs a description"):

        @tool
        def silent() -> None:
            return None


def test_unannotated_parameter_is_refused_naming_it() -> None:
    with pytest.raises(ToolDefinitionError, match="parameter 'x' needs a type annotation"):

        @tool
        def loose(x) -> None:  # type: ignore[no-untyped-def]
            """Loose."""


def test_varargs_are_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="parameter 'rest'"):

        @tool
        def many(*rest: int) -> None:
            """Many."""


def test_model_tool_must_take_exactly_one_argument() -> None:
    with pytest.raises(ToolDefinitionError, match="exactly one argument"):

        @tool(parameters=Order)
        def two(a: Order, b: int) -> None:
            """Two."""


class Opaque:
    """Not something pydantic can describe."""


def test_unschemable_parameter_type_is_refused_naming_the_tool() -> None:
    with pytest.raises(ToolDefinitionError, match="tool 'opaque': cannot build a schema"):

        @tool
        def opaque(thing: Opaque) -> None:
            """Opaque."""


def test_unresolvable_type_hint_is_refused_naming_the_tool() -> None:
    class Local:
        pass

    with pytest.raises(ToolDefinitionError, match="tool 'local': cannot resolve its type hints"):

        @tool
        def local(thing: Local) -> None:
            """Local."""


def test_non_positive_timeout_is_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="timeout_s must be positive"):

        @tool(timeout_s=0)
        def quick() -> None:
            """Quick."""
