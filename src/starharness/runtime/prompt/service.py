"""`ctx.get(PROMPT)`: the static system prompt from ordered sections, and dynamic context text."""

from __future__ import annotations

from ..kernel import Bindable, Context, Disposer
from .errors import PromptError
from .keys import PROMPT
from .store import (
    Entry,
    Layer,
    Plan,
    PromptStore,
    SectionText,
    VariableValue,
    render_entries,
    render_named,
)
from .template import Template

_SEPARATOR = "\n\n"


class PromptService(Bindable["PromptService"]):
    """`ctx.get(PROMPT)`: sections, dynamic contexts and variables, in layers like the tools.

    Bound to a context, registrations go to that context's layer (global for plugins, the
    agent's own for an agent context) and are undone with its scope; a section, context or
    variable in a narrower layer shadows the same name in a wider one.
    """

    __slots__ = ("_chain", "_ctx", "_last_text", "_memo_parts", "_plan", "_plan_version", "_store")

    def __init__(self) -> None:
        self._store = PromptStore()
        self._ctx: Context | None = None
        self._chain: tuple[Layer, ...] = (None,)
        self._reset()

    def _reset(self) -> None:
        self._plan: Plan | None = None
        self._plan_version = -1
        self._last_text: str | None = None
        # For plans that depend on the context: the parts `_last_text` was joined from.
        self._memo_parts: list[str] | None = None

    def bind(self, ctx: Context) -> PromptService:
        """The view of this service that `ctx` sees (the kernel caches it per context)."""
        view = object.__new__(PromptService)
        view._store = self._store
        view._ctx = ctx
        view._chain = (None, *reversed(ctx.layers))
        view._reset()
        return view

    # -- registration ------------------------------------------------------------------------

    def section(self, name: str, order: float, text: SectionText) -> Disposer:
        """A static part of the system prompt; sections are joined by (order, name)."""
        return self._store.sections.add(self._ctx, name, _entry(name, order, text))

    def context(self, name: str, order: float, text: SectionText) -> Disposer:
        """Dynamic context, rendered at the start of every turn and logged (when its text
        changed) just before the turn's first message."""
        return self._store.contexts.add(self._ctx, name, _entry(name, order, text))

    def variable(self, name: str, value: VariableValue) -> Disposer:
        """The value of `{{name}}` in literal section and context text."""
        if not name:
            raise PromptError("a variable needs a name")
        return self._store.variables.add(self._ctx, name, value)

    # -- assembly ----------------------------------------------------------------------------

    def assemble(self, ctx: Context | None = None) -> str:
        """The system prompt; the same string object while nothing it depends on changes."""
        if ctx is not None and ctx is not self._ctx:
            return self._view_for(ctx).assemble()
        own = self._require_ctx()
        plan = self._current_plan()
        if plan.fixed:
            text = plan.text
            if text is None:
                parts = render_entries(plan.sections, plan.variables, own, "section")
                text = plan.text = plan.adopt(_SEPARATOR.join(parts))
        else:
            parts = render_entries(plan.sections, plan.variables, own, "section")
            if parts == self._memo_parts and self._last_text is not None:
                return self._last_text
            self._memo_parts = parts
            text = plan.adopt(_SEPARATOR.join(parts))
        self._last_text = text
        return text

    def render_context(self, ctx: Context | None = None) -> str | None:
        """The dynamic context text for the next request, or None when there is none."""
        if ctx is not None and ctx is not self._ctx:
            return self._view_for(ctx).render_context()
        own = self._require_ctx()
        plan = self._current_plan()
        if not plan.contexts:
            return None
        parts = render_entries(plan.contexts, plan.variables, own, "context")
        return _SEPARATOR.join(parts) if parts else None

    def render_context_parts(self, ctx: Context | None = None) -> list[tuple[str, str]]:
        """Each dynamic context entry's name and text, in order, leaving out empty ones: the
        runtime logs only the entries whose text changed, so one that changes every turn
        does not send the others again."""
        if ctx is not None and ctx is not self._ctx:
            return self._view_for(ctx).render_context_parts()
        own = self._require_ctx()
        plan = self._current_plan()
        if not plan.contexts:
            return []
        return render_named(plan.contexts, plan.variables, own, "context")

    def section_names(self) -> list[str]:
        """The visible sections' names in assembly order."""
        return [entry.name for entry in self._current_plan().sections]

    def _current_plan(self) -> Plan:
        plan = self._plan
        version = self._store.version
        if plan is None or self._plan_version != version:
            plan = self._plan = self._store.plan(self._chain, self._last_text)
            self._plan_version = version
            self._memo_parts = None
        return plan

    def _require_ctx(self) -> Context:
        if self._ctx is None:
            raise PromptError("pass the agent's context: this prompt service is not bound to one")
        return self._ctx

    def _view_for(self, ctx: Context) -> PromptService:
        view = ctx.maybe(PROMPT)
        if isinstance(view, PromptService) and view._store is self._store:
            return view
        return self.bind(ctx)


def _entry(name: str, order: float, text: SectionText) -> Entry:
    if not name:
        raise PromptError("a section or context needs a name")
    template = Template.parse(text) if isinstance(text, str) else None
    return Entry(name, order, text, template)
