"""An interactive agent in a terminal: prompt, streamed answer, tool activity, approvals."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Final, TextIO

from ..runtime.approvals import APPROVALS, ApprovalRequest, Decision, InteractiveApprovals
from ..runtime.ask_user import USER_QUESTIONS, Question
from ..runtime.context import WorkBook, render_plan
from ..runtime.context.events import (
    COMPACTION_END,
    GOAL_CHANGE,
    PLAN_CHANGE,
    SUBAGENT_START,
)
from ..runtime.context.goals import render_state
from ..runtime.kernel import Context
from ..runtime.loop import (
    AGENTS,
    SESSION_EVENT,
    Agent,
    AgentOptions,
    CancelCause,
    LoggedEvent,
)
from ..runtime.session import event_types as ev
from ._terminal_lines import LineSource

PROMPT: Final = "> "
APPROVAL_PROMPT: Final = "Allow it once? [y] yes, [n] no, [c] cancel: "
ANSWER_PROMPT: Final = "Your answer (empty to skip): "
HELP: Final = (
    "Type a message and press Enter. Commands: /status shows the session (and the Godot "
    "bridge in Godot mode), /plan the agent's goal and plan, /help this text, /quit exits. "
    "Ctrl-C cancels the running turn; Ctrl-D exits."
)
_SHORT_RESULT = 200
_SHORT_ARGUMENTS = 400

_ANSWERS: Final = {
    "y": Decision.ALLOWED_ONCE,
    "yes": Decision.ALLOWED_ONCE,
    "n": Decision.REJECTED,
    "no": Decision.REJECTED,
    "": Decision.REJECTED,
    "c": Decision.CANCELLED,
    "cancel": Decision.CANCELLED,
}

StatusLines = Callable[["ChatSession"], Sequence[str]]


def shorten(text: str, limit: int) -> str:
    """One line, at most `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


class ChatSession:
    """One agent, one session, driven by lines from `lines` and printed to `out`.

    `interrupt()` is what Ctrl-C does: it cancels the running turn (or, at the prompt, only
    says how to exit). The session ends at the end of input or on /quit.
    """

    def __init__(
        self,
        ctx: Context,
        lines: LineSource,
        out: TextIO,
        *,
        session_id: str | None = None,
        options: AgentOptions | None = None,
        status: StatusLines | None = None,
        banner: Sequence[str] = (),
        echo_input: bool = False,
    ) -> None:
        self.ctx = ctx
        self.session_id = session_id or f"chat-{uuid.uuid4().hex[:12]}"
        self._lines = lines
        self._out = out
        self._options = options
        self._status = status
        self._banner = banner
        self._echo = echo_input
        self._agent: Agent | None = None
        self._busy = False
        self._at_line_start = True
        self._prompt_shown = ""

    @property
    def agent(self) -> Agent | None:
        return self._agent

    async def run(self) -> int:
        """Chat until the input ends or /quit; 0 always (failed turns are shown, not fatal)."""
        approvals = self.ctx.maybe(APPROVALS)
        detach = (
            approvals.attach(self._ask) if isinstance(approvals, InteractiveApprovals) else None
        )
        questions = self.ctx.maybe(USER_QUESTIONS)
        stop_answering = questions.attach(self._answer) if questions is not None else None
        handle = await self.ctx.get(AGENTS).create(
            self.session_id, setup=self._set_up, options=self._options
        )
        self._agent = handle.agent
        try:
            for line in self._banner:
                self._line(line)
            while True:
                text = await self._read(PROMPT)
                if text is None:
                    self._end_line()
                    break
                text = text.strip()
                if not text:
                    continue
                if text.startswith("/"):
                    if not self._command(text):
                        break
                    continue
                await self._turn(handle.agent, text)
        finally:
            if detach is not None:
                detach()
            if stop_answering is not None:
                stop_answering()
            self._agent = None
            await handle.dispose()
        return 0

    def interrupt(self) -> None:
        """Ctrl-C: cancel the running turn; at the prompt, say how to leave."""
        agent = self._agent
        if agent is not None and self._busy:
            self._line("(cancelling the turn)")
            agent.cancel(CancelCause("user", "cancelled at the terminal"))
            return
        self._line("(Ctrl-D or /quit exits)")
        if self._prompt_shown:
            self._write(self._prompt_shown)

    # -- turns -------------------------------------------------------------------------------

    def _set_up(self, agent_ctx: Context) -> None:
        agent_ctx.on(SESSION_EVENT, self._observe)

    async def _turn(self, agent: Agent, text: str) -> None:
        self._busy = True
        try:
            agent.followup(text)
            await agent.when_idle()
        finally:
            self._busy = False
        self._end_line()

    def _observe(self, logged: LoggedEvent) -> None:
        event = logged.event
        kind = event.type
        if kind == ev.ASSISTANT_CHUNK:
            chunk: ev.ChunkData = event.data["chunk"]
            if chunk["type"] == ev.TEXT_DELTA:
                self._write(chunk.get("text", ""))
        elif kind == ev.TOOL_CALL:
            call = ev.payload(event, ev.TOOL_CALL)
            self._line(f"[tool] {call['name']}({shorten(call['arguments'], _SHORT_ARGUMENTS)})")
        elif kind == ev.TOOL_RESULT:
            result = ev.payload(event, ev.TOOL_RESULT)
            mark = "error" if result["is_error"] else "ok"
            content = shorten(str(result["content"]), _SHORT_RESULT)
            self._line(f"[tool] {result['name']} -> {mark}: {content}")
        elif kind == ev.LLM_RETRY:
            retry = ev.payload(event, ev.LLM_RETRY)
            self._line(f"[retry] attempt {retry['attempt']}: {retry['error']}")
        elif kind == PLAN_CHANGE:
            plan = ev.payload(event, PLAN_CHANGE)
            self._line("[plan] " + render_plan(plan["items"], plan["revision"]))
        elif kind == GOAL_CHANGE:
            goal = ev.payload(event, GOAL_CHANGE)
            self._line(f"[goal] {goal['goal']} ({goal['status']}, revision {goal['revision']})")
        elif kind == COMPACTION_END:
            end = ev.payload(event, COMPACTION_END)
            if end.get("outcome") not in ("nothing", None):
                self._line(
                    f"[context compacted: {end.get('outcome')}, about"
                    f" {end.get('tokens_before', '?')} -> {end.get('tokens_after', '?')} tokens]"
                )
        elif kind == SUBAGENT_START:
            child = ev.payload(event, SUBAGENT_START)
            self._line(f"[subagent] {child['child']}: {shorten(child['task'], _SHORT_ARGUMENTS)}")
        elif kind == ev.TURN_END:
            end = ev.payload(event, ev.TURN_END)
            if end["reason"] != "completed":
                error = end.get("error")
                self._line(f"[turn {end['reason']}{': ' + str(error) if error else ''}]")

    # -- approvals ---------------------------------------------------------------------------

    async def _ask(self, request: ApprovalRequest) -> Decision:
        reason = f" ({request.reason})" if request.reason else ""
        arguments = shorten(request.arguments or "{}", _SHORT_ARGUMENTS)
        self._line(f"[approval] {request.tool}{reason} wants to run with {arguments}")
        while True:
            answer = await self._read(APPROVAL_PROMPT)
            if answer is None:
                return Decision.CANCELLED
            decision = _ANSWERS.get(answer.strip().lower())
            if decision is not None:
                return decision
            self._line("Please answer y, n or c.")

    async def _answer(self, question: Question) -> str | None:
        options = f" (for example: {' / '.join(question.options)})" if question.options else ""
        self._line(f"[question] {question.text}{options}")
        return await self._read(ANSWER_PROMPT)

    # -- commands ----------------------------------------------------------------------------

    def _command(self, text: str) -> bool:
        """Run a /command; False means quit."""
        name = text.split()[0].lower()
        if name in ("/quit", "/exit"):
            return False
        if name == "/help":
            self._line(HELP)
        elif name == "/plan":
            agent = self.agent
            state = WorkBook().state(agent.session) if agent is not None else None
            shown = render_state(state) if state is not None else None
            self._line(shown or "no goal or plan yet")
        elif name == "/status":
            self._line(f"session: {self.session_id}")
            for line in self._status(self) if self._status is not None else ():
                self._line(line)
        else:
            self._line(f"unknown command {name}; /help lists the commands")
        return True

    # -- output ------------------------------------------------------------------------------

    async def _read(self, prompt: str) -> str | None:
        self._end_line()
        self._write(prompt)
        self._prompt_shown = prompt
        try:
            line = await self._lines.next_line()
        finally:
            self._prompt_shown = ""
        if line is None:
            self._at_line_start = False  # Ctrl-D leaves the cursor after the prompt
            self._end_line()
        elif self._echo:
            self._write(line + "\n")  # piped input is not echoed by a terminal
        else:
            self._at_line_start = True  # the terminal echoed the line and its Enter
        return line

    def _write(self, text: str) -> None:
        if not text:
            return
        self._out.write(text)
        self._out.flush()
        self._at_line_start = text.endswith("\n")

    def _end_line(self) -> None:
        if not self._at_line_start:
            self._write("\n")

    def _line(self, text: str) -> None:
        self._end_line()
        self._write(text + "\n")
