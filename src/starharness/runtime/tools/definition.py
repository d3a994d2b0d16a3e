"""ToolDefinition and `define_tool`: a tool's name, shared schema, parser and executor."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from ..errors import StarHarnessError
from ..llm.types import ToolSchema
from .arguments import copy_schema, model_parser, parameters_schema
from .run import ToolRunContext

A = TypeVar("A")
M = TypeVar("M", bound=BaseModel)

Execute = Callable[[A, ToolRunContext], Awaitable[Any]]
"""Runs a tool: returns a value (shown as text or JSON), a ToolSuccess or a ToolFailure."""

_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")

MUTATING = "mutating"
"""Tag for tools that change state outside the conversation."""
REQUIRES_APPROVAL = "requires-approval"
"""Tag for tools the default approval policy asks about before running."""


class ToolDefinitionError(StarHarnessError, ValueError):
    """A tool was defined wrongly (bad name, missing description, unusable signature)."""


@dataclass(frozen=True, slots=True, eq=False)
class ToolDefinition(Generic[A]):
    """One tool. Its `schema` is built once and shared by every agent that sees the tool."""

    name: str
    description: str
    schema: ToolSchema
    parse: Callable[[str], A]
    """Turns the raw JSON arguments into what `execute` takes; raises ValidationError or
    ToolArgsError naming the field."""
    execute: Execute[A]
    timeout_s: float | None = None
    """None: the registry's default timeout."""
    concurrency_safe: bool = False
    """Safe calls of one batch run in parallel; the others run one at a time, in order."""
    tags: frozenset[str] = field(default_factory=frozenset[str])
    args_model: type[BaseModel] | None = None

    def __post_init__(self) -> None:
        check_name(self.name)
        if self.schema.name != self.name:
            raise ToolDefinitionError(
                f"tool {self.name!r}: its schema is named {self.schema.name!r}"
            )
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise ToolDefinitionError(f"tool {self.name!r}: timeout_s must be positive")


def check_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        raise ToolDefinitionError(
            f"invalid tool name {name!r}: use 1-64 letters, digits, '_' or '-'"
        )


def define_tool(
    name: str,
    description: str,
    parameters: type[M],
    execute: Callable[[M, ToolRunContext], Awaitable[Any]] | Callable[[M, ToolRunContext], Any],
    *,
    timeout_s: float | None = None,
    concurrency_safe: bool = False,
    tags: Iterable[str] = (),
) -> ToolDefinition[M]:
    """A tool whose arguments are validated by the pydantic model `parameters`.

    `execute` gets the model instance; a plain (non-async) function runs on the event loop,
    so it must be quick.
    """
    check_name(name)
    if not description.strip():
        raise ToolDefinitionError(f"tool {name!r} needs a description")
    schema = ToolSchema(name, description.strip(), parameters_schema(parameters))
    return ToolDefinition(
        name=name,
        description=schema.description,
        schema=schema,
        parse=model_parser(parameters),
        execute=as_async(execute),
        timeout_s=timeout_s,
        concurrency_safe=concurrency_safe,
        tags=frozenset(tags),
        args_model=parameters,
    )


def define_raw_tool(
    name: str,
    description: str,
    parameters: Mapping[str, Any],
    parse: Callable[[str], A],
    execute: Execute[A],
    *,
    timeout_s: float | None = None,
    concurrency_safe: bool = False,
    tags: Iterable[str] = (),
) -> ToolDefinition[A]:
    """A tool with a hand-written JSON Schema and its own parser (for generated tools)."""
    check_name(name)
    if not description.strip():
        raise ToolDefinitionError(f"tool {name!r} needs a description")
    schema = ToolSchema(name, description.strip(), copy_schema(parameters))
    return ToolDefinition(
        name=name,
        description=schema.description,
        schema=schema,
        parse=parse,
        execute=execute,
        timeout_s=timeout_s,
        concurrency_safe=concurrency_safe,
        tags=frozenset(tags),
    )


def as_async(fn: Callable[[A, ToolRunContext], Any]) -> Execute[A]:
    """`fn` itself when it is async; otherwise a coroutine wrapper that calls it inline."""
    if inspect.iscoroutinefunction(fn):
        return fn

    async def call_inline(args: A, run: ToolRunContext) -> Any:
        return fn(args, run)

    return call_inline
