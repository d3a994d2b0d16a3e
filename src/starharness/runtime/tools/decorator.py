"""The `@tool` decorator: a ToolDefinition from a function's signature and docstring."""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any, overload

from pydantic import BaseModel, ConfigDict, create_model

from .definition import ToolDefinition, ToolDefinitionError, as_async, check_name, define_tool
from .run import ToolRunContext

ToolFunction = Callable[..., Any]

_FORBID_EXTRA = ConfigDict(extra="forbid")


@overload
def tool(fn: ToolFunction, /) -> ToolDefinition[Any]: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: type[BaseModel] | None = None,
    timeout_s: float | None = None,
    concurrency_safe: bool = False,
    tags: Iterable[str] = (),
) -> Callable[[ToolFunction], ToolDefinition[Any]]: ...


def tool(
    fn: ToolFunction | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    parameters: type[BaseModel] | None = None,
    timeout_s: float | None = None,
    concurrency_safe: bool = False,
    tags: Iterable[str] = (),
) -> ToolDefinition[Any] | Callable[[ToolFunction], ToolDefinition[Any]]:
    """Turn a function into a tool: parameters from its type hints, description from its docstring.

    Without `parameters`, each argument becomes a field (use `Annotated[..., Field(...)]` for
    descriptions and limits) and unknown fields are refused. With `parameters=Model`, the function
    takes the validated model instance. A parameter annotated `ToolRunContext` gets the run context.
    """
    tag_set = frozenset(tags)

    def build(function: ToolFunction) -> ToolDefinition[Any]:
        tool_name = name if name is not None else function.__name__
        check_name(tool_name)
        text = description if description is not None else _first_paragraph(function)
        if not text:
            raise ToolDefinitionError(
                f"tool {tool_name!r} needs a description: give it a docstring or description="
            )
        signature = _Signature.read(function, tool_name)
        if parameters is not None:
            model = parameters
            execute = signature.model_caller(function, tool_name)
        else:
            model = signature.build_model(tool_name)
            execute = signature.field_caller(function)
        return define_tool(
            tool_name,
            text,
            model,
            execute,
            timeout_s=timeout_s,
            concurrency_safe=concurrency_safe,
            tags=tag_set,
        )

    if fn is not None:
        return build(fn)
    return build


def _first_paragraph(function: ToolFunction) -> str:
    doc = inspect.getdoc(function)
    if not doc:
        return ""
    paragraph = doc.strip().split("\n\n", 1)[0]
    return " ".join(line.strip() for line in paragraph.splitlines())


def _wants_run(hint: Any) -> bool:
    """`ToolRunContext`, or an optional one (`ToolRunContext | None`)."""
    if hint is ToolRunContext:
        return True
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return ToolRunContext in typing.get_args(hint)
    return False


class _Signature:
    """The function's parameters split into model fields and the (optional) run-context slot."""

    __slots__ = ("fields", "is_async", "run_param")

    def __init__(
        self, fields: list[inspect.Parameter], run_param: str | None, is_async: bool
    ) -> None:
        self.fields = fields
        self.run_param = run_param
        self.is_async = is_async

    @classmethod
    def read(cls, function: ToolFunction, tool_name: str) -> _Signature:
        try:
            hints = typing.get_type_hints(function, include_extras=True)
        except Exception as error:
            raise ToolDefinitionError(
                f"tool {tool_name!r}: cannot resolve its type hints ({error})"
            ) from error
        fields: list[inspect.Parameter] = []
        run_param: str | None = None
        for param in inspect.signature(function).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
                raise ToolDefinitionError(
                    f"tool {tool_name!r}: parameter {param.name!r} must be a plain or "
                    "keyword parameter"
                )
            hint = hints.get(param.name, param.empty)
            if _wants_run(hint):
                if run_param is not None:
                    raise ToolDefinitionError(f"tool {tool_name!r}: two ToolRunContext parameters")
                run_param = param.name
                continue
            if hint is param.empty:
                raise ToolDefinitionError(
                    f"tool {tool_name!r}: parameter {param.name!r} needs a type annotation"
                )
            fields.append(param.replace(annotation=hint))
        return cls(fields, run_param, inspect.iscoroutinefunction(function))

    def build_model(self, tool_name: str) -> type[BaseModel]:
        definitions: dict[str, Any] = {}
        for param in self.fields:
            if param.name.startswith("_"):
                raise ToolDefinitionError(
                    f"tool {tool_name!r}: parameter {param.name!r} cannot start with '_'"
                )
            default = ... if param.default is param.empty else param.default
            definitions[param.name] = (param.annotation, default)
        try:
            return create_model(f"{tool_name}_arguments", __config__=_FORBID_EXTRA, **definitions)
        except Exception as error:
            raise ToolDefinitionError(
                f"tool {tool_name!r}: cannot build a schema for its parameters ({error})"
            ) from error

    def field_caller(self, function: ToolFunction) -> Callable[[BaseModel, ToolRunContext], Any]:
        """Calls `function(**fields)`, adding the run context by name when it wants one."""
        run_param = self.run_param
        if self.is_async:
            if run_param is None:

                async def call_async(args: BaseModel, run: ToolRunContext) -> Any:
                    return await function(**args.__dict__)

                return call_async

            async def call_async_with_run(args: BaseModel, run: ToolRunContext) -> Any:
                return await function(**args.__dict__, **{run_param: run})

            return call_async_with_run
        if run_param is None:
            return as_async(lambda args, run: function(**args.__dict__))
        return as_async(lambda args, run: function(**args.__dict__, **{run_param: run}))

    def model_caller(
        self, function: ToolFunction, tool_name: str
    ) -> Callable[[BaseModel, ToolRunContext], Any]:
        """Calls `function(model_instance)`, adding the run context by name when it wants one."""
        if len(self.fields) != 1:
            raise ToolDefinitionError(
                f"tool {tool_name!r}: with parameters=, the function takes exactly one argument "
                "(the validated model) besides an optional ToolRunContext"
            )
        run_param = self.run_param
        if run_param is None:
            if self.is_async:

                async def call_async(args: BaseModel, run: ToolRunContext) -> Any:
                    return await function(args)

                return call_async
            return as_async(lambda args, run: function(args))
        if self.is_async:

            async def call_async_with_run(args: BaseModel, run: ToolRunContext) -> Any:
                return await function(args, **{run_param: run})

            return call_async_with_run
        return as_async(lambda args, run: function(args, **{run_param: run}))
