"""The layered tables behind the prompt service, and the plans assembled from them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ..kernel import Context, LayeredTable
from .errors import PromptError
from .template import Template

SectionText = str | Callable[[Context], str | None]
"""Literal text (may use `{{variables}}`) or a function of the agent's context (used verbatim)."""
VariableValue = str | Callable[[Context], str]

Layer = Context | None
"""An agent layer's context, or None for the global layer."""
Kind = Literal["section", "context"]


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    order: float
    text: SectionText
    template: Template | None


class Plan:
    """What one chain of layers sees: entries sorted by (order, name), and the variables.

    A fixed plan (literal text and literal variables only) renders the same for every
    context, so its text is computed once and shared by every view that uses the plan.
    """

    __slots__ = ("contexts", "fixed", "previous_text", "sections", "text", "variables")

    def __init__(
        self,
        sections: list[Entry],
        contexts: list[Entry],
        variables: dict[str, VariableValue],
        previous_text: str | None,
    ) -> None:
        self.sections = sections
        self.contexts = contexts
        self.variables = variables
        self.fixed = all(_is_fixed(entry, variables) for entry in sections)
        self.text: str | None = None
        # Reused when the new text is equal, so callers can compare prompts by identity.
        self.previous_text = previous_text

    def adopt(self, text: str) -> str:
        """`text`, or the equal string the previous plan produced."""
        previous = self.previous_text
        if previous is not None and previous == text:
            return previous
        return text


def _is_fixed(entry: Entry, variables: dict[str, VariableValue]) -> bool:
    if not isinstance(entry.text, str):
        return False
    if entry.template is None:
        return True
    return all(isinstance(variables.get(name, ""), str) for name in entry.template.names)


class PromptStore:
    """Every layer's sections, contexts and variables, shared by all views of one service."""

    __slots__ = ("_global_plan", "_global_version", "contexts", "sections", "variables")

    def __init__(self) -> None:
        self.sections: LayeredTable[Entry] = LayeredTable("section", PromptError)
        self.contexts: LayeredTable[Entry] = LayeredTable("context", PromptError)
        self.variables: LayeredTable[VariableValue] = LayeredTable("variable", PromptError)
        self._global_plan: Plan | None = None
        self._global_version = -1

    @property
    def version(self) -> int:
        """Changes whenever any table changes (each change bumps exactly one of them)."""
        return self.sections.version + self.contexts.version + self.variables.version

    def plan(self, chain: tuple[Layer, ...], last_text: str | None) -> Plan:
        """The plan for `chain` (widest layer first); chains without agent entries share one.

        `last_text` is what the caller assembled last, reused if the new plan renders the same.
        """
        if any(self._has_entries(layer) for layer in chain if layer is not None):
            return self._build(chain, last_text)
        shared = self._global_plan
        if shared is None or self._global_version != self.version:
            previous = shared.text if shared is not None and shared.text is not None else last_text
            shared = self._global_plan = self._build((None,), previous)
            self._global_version = self.version
        return shared

    def _has_entries(self, layer: Layer) -> bool:
        return (
            self.sections.has_layer(layer)
            or self.contexts.has_layer(layer)
            or self.variables.has_layer(layer)
        )

    def _build(self, chain: tuple[Layer, ...], previous_text: str | None) -> Plan:
        return Plan(
            sorted(self.sections.merged(chain).values(), key=_sort_key),
            sorted(self.contexts.merged(chain).values(), key=_sort_key),
            self.variables.merged(chain),
            previous_text,
        )


def _sort_key(entry: Entry) -> tuple[float, str]:
    return (entry.order, entry.name)


def render_entries(
    entries: list[Entry], variables: dict[str, VariableValue], ctx: Context, kind: Kind
) -> list[str]:
    """Each entry's text (variables filled in, callables called), leaving out empty ones."""
    return [text for _, text in render_named(entries, variables, ctx, kind)]


def render_named(
    entries: list[Entry], variables: dict[str, VariableValue], ctx: Context, kind: Kind
) -> list[tuple[str, str]]:
    """Each entry's name and text, in order, leaving out empty ones."""

    def lookup(name: str) -> str | None:
        value = variables.get(name)
        if value is None or isinstance(value, str):
            return value
        return str(value(ctx))

    parts: list[tuple[str, str]] = []
    for entry in entries:
        text = entry.text
        if entry.template is not None:
            rendered: str | None = entry.template.render(lookup, f"{kind} {entry.name!r}")
        elif isinstance(text, str):
            rendered = text
        else:
            rendered = text(ctx)
        if rendered:
            parts.append((entry.name, rendered))
    return parts
