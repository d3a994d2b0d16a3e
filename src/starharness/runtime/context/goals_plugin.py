"""GoalsPlugin: `set_goal` and `todo_write` tools over the folded goal and plan, and the
current goal and plan as dynamic context (logged whenever it changes)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..kernel import Context, Plugin
from ..loop import AGENTS
from ..prompt import PROMPT
from ..session import SESSIONS
from ..tools import TOOLS, ToolFailure, ToolRunContext, ToolSuccess, define_tool
from .goals import StaleRevisionError, WorkBook, render_plan, render_state

SET_GOAL_TOOL = "set_goal"
TODO_TOOL = "todo_write"
CONTEXT_NAME = "goals.current"


class GoalsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    goal_tool: bool = True
    plan_tool: bool = True
    context: bool = True
    """Show the current goal and plan to the model as dynamic context."""
    context_order: float = 50


class PlanItemArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Annotated[str, Field(min_length=1, max_length=40)]
    text: Annotated[str, Field(min_length=1, max_length=500)]
    status: Literal["pending", "in_progress", "done"] = "pending"


class TodoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    items: Annotated[list[PlanItemArgs], Field(max_length=50, description="The whole plan.")]
    expected_revision: Annotated[
        int, Field(ge=0, description="The plan's current revision (0 before the first).")
    ]


class GoalArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    goal: Annotated[str, Field(min_length=1, max_length=2000)]
    status: Literal["active", "done", "dropped"] = "active"
    expected_revision: Annotated[int, Field(ge=0, description="The goal's current revision.")]


class GoalsPlugin(Plugin[GoalsConfig]):
    """Provides the goal and plan tools and context."""

    needs_agent_loop = True

    Config = GoalsConfig
    inject = (TOOLS, SESSIONS)

    async def setup(self, ctx: Context, config: GoalsConfig) -> None:
        book = WorkBook()
        if config.plan_tool:
            ctx.get(TOOLS).register(_todo_tool(ctx, book))
        if config.goal_tool:
            ctx.get(TOOLS).register(_goal_tool(ctx, book))
        prompt = ctx.maybe(PROMPT)
        if config.context and prompt is not None:

            def current(agent_ctx: Context) -> str:
                agents = agent_ctx.maybe(AGENTS)
                if agents is None:
                    return ""
                agent = next((a for a in agents.list() if a.ctx is agent_ctx), None)
                if agent is None:
                    return ""
                return render_state(book.state(agent.session)) or ""

            prompt.context(CONTEXT_NAME, config.context_order, current)


def _agent(ctx: Context, run: ToolRunContext) -> Any:
    agents = ctx.maybe(AGENTS)
    return agents.get(run.session_id) if agents is not None else None


def _todo_tool(ctx: Context, book: WorkBook) -> Any:
    async def todo_write(args: TodoArgs, run: ToolRunContext) -> ToolSuccess | ToolFailure:
        agent = _agent(ctx, run)
        if agent is None:
            return ToolFailure("todo_write needs a calling agent")
        items = [item.model_dump() for item in args.items]
        try:
            state = book.change_plan(agent, items, args.expected_revision)
        except StaleRevisionError as exc:
            current = book.state(agent.session)
            return ToolFailure(f"{exc}\n{render_plan(current.plan, current.plan_revision)}")
        except ValueError as exc:
            return ToolFailure(str(exc))
        return ToolSuccess(
            {"revision": state.plan_revision}, render_plan(state.plan, state.plan_revision)
        )

    return define_tool(
        TODO_TOOL,
        "Write the whole plan (todo list) for the task: items with id, text and status"
        " (pending, in_progress, done). Pass the plan's current revision; a stale one is"
        " refused with the current plan.",
        TodoArgs,
        todo_write,
    )


def _goal_tool(ctx: Context, book: WorkBook) -> Any:
    async def set_goal(args: GoalArgs, run: ToolRunContext) -> ToolSuccess | ToolFailure:
        agent = _agent(ctx, run)
        if agent is None:
            return ToolFailure("set_goal needs a calling agent")
        try:
            state = book.change_goal(agent, args.goal, args.status, args.expected_revision)
        except StaleRevisionError as exc:
            return ToolFailure(str(exc))
        return ToolSuccess(
            {"revision": state.goal_revision},
            f"Goal (revision {state.goal_revision}, {state.goal_status}): {state.goal}",
        )

    return define_tool(
        SET_GOAL_TOOL,
        "Set the session's goal or mark it done or dropped. Pass the goal's current revision"
        " (0 before the first); a stale one is refused.",
        GoalArgs,
        set_goal,
    )
