"""Calling responders (`starharness.responder`): how the mock asks one for a step, and loads one."""

from __future__ import annotations

import importlib
import inspect
from typing import Any, cast

from ..responder import ChatRequest, Responder, Step
from ..responder.steps import STEP_TYPES


class ResponderError(Exception):
    """A responder failed or returned something that is not a step."""


async def ask_responder(responder: Responder, request: ChatRequest) -> Step:
    """Call a sync or async responder and check that it returned a step."""
    try:
        result: Any = responder(request)
        if inspect.isawaitable(result):
            result = await result
    except Exception as exc:
        raise ResponderError(
            f"responder {_name(responder)} raised {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(result, STEP_TYPES):
        raise ResponderError(
            f"responder {_name(responder)} returned {type(result).__name__}, expected a step "
            "(Success, ToolCalls, ...)"
        )
    return cast(Step, result)


def _name(responder: object) -> str:
    return str(getattr(responder, "__qualname__", None) or type(responder).__qualname__)


def load_responder(spec: str) -> Responder:
    """Import `module:attr` (attr may be dotted) and check that it is callable."""
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise ValueError(f"responder must be given as module:attr, got {spec!r}")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import responder module {module_name!r}: {exc}") from exc
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ValueError(f"responder {spec!r}: {part!r} not found") from None
    if not callable(target):
        raise ValueError(f"responder {spec!r} is not a callable")
    return cast(Responder, target)
