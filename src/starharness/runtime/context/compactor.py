"""The compaction unit: compaction/start, prune (no model), summarize (model) or forget (no
model), compaction/end.

Both strategies change the view only through logged events that replace a span of it, so the
log stays complete and every request stays rebuildable from it.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeGuard

from ..llm.errors import ContextOverflowError, LlmError
from ..llm.types import (
    AssistantMessage,
    LlmRequest,
    Message,
    TextDelta,
    ToolMessage,
    UserMessage,
)
from ..loop import CompactRequest
from ..session import (
    VIEW_REWRITE,
    Projection,
    SessionEvent,
    ViewRewriteData,
    message_to_data,
    payload,
    replace_op,
)
from ..session import event_types as ev
from .compaction_config import CompactionConfig, Limits
from .compaction_recovery import summary_message_data
from .events import (
    COMPACTION_END,
    COMPACTION_PRUNE,
    COMPACTION_START,
    COMPACTION_SUMMARY,
    SUMMARY_SOURCE,
    CompactionEndData,
    CompactionPruneData,
    CompactionStartData,
    CompactionSummaryData,
    CompactionTrigger,
)
from .tokens import estimate_tokens, message_chars, messages_tokens

if TYPE_CHECKING:
    from ..loop import Agent

SUMMARY_SYSTEM = (
    "You compact the history of an agent's session. Write a summary that lets the agent carry"
    " on without the messages it replaces: the user's goals and requests, decisions made, what"
    " was done and found (files, names, numbers, errors), and what is still open. Be concise"
    " and factual; do not invent anything."
)
_MIN_SPAN = 1
_CONTEXT_SOURCE = "context"
_NOT_A_REQUEST = frozenset({_CONTEXT_SOURCE, SUMMARY_SOURCE})


class Compactor:
    """Listens to `agent/compact`; one compaction at a time per agent."""

    def __init__(self, config: CompactionConfig) -> None:
        self.config = config
        self._busy: set[str] = set()

    def limits(self, agent: Agent) -> Limits:
        config = self.config
        provider = agent.llm.get(agent.options.provider)
        window = config.context_window
        profile = getattr(provider, "profile", None)
        declared: int | None = getattr(profile, "context_window", None)
        if declared is not None:
            window = declared
        threshold, retain = config.threshold_ratio, config.retain_ratio
        for override in config.providers:
            if override.provider == provider.name:
                window = override.context_window or window
                threshold = override.threshold_ratio or threshold
                retain = override.retain_ratio or retain
        return Limits(window, threshold, retain)

    def tokens(self, agent: Agent) -> int:
        return estimate_tokens(agent.session.header(), agent.session.messages())

    async def on_compact(self, request: CompactRequest) -> bool | None:
        agent = request.agent
        if agent.id in self._busy:
            return None
        limits = self.limits(agent)
        if request.trigger == "pressure" and (not self.config.auto or limits.threshold is None):
            return None  # before every step: no estimate when nothing could come of it
        tokens = self.tokens(agent)
        if request.trigger == "pressure":
            threshold = limits.threshold
            if threshold is None or tokens < threshold:
                return None
        self._busy.add(agent.id)
        try:
            return await self.compact(agent, request.trigger, tokens, limits) or None
        finally:
            self._busy.discard(agent.id)

    async def compact(
        self, agent: Agent, trigger: CompactionTrigger, tokens: int, limits: Limits
    ) -> bool:
        """One compaction; True when the view shrank."""
        cid = uuid.uuid4().hex[:12]
        started = time.perf_counter()
        agent.log(
            COMPACTION_START,
            CompactionStartData(
                id=cid, trigger=trigger, tokens_before=tokens, window=limits.window
            ),
        )
        end = CompactionEndData(id=cid, tokens_before=tokens)
        try:
            retain = limits.retain
            if retain is None:
                # No declared window: keep the newest quarter of the history itself.
                retain = messages_tokens(agent.session.messages()) // 4
            pruned = self._prune(agent, cid, retain)
            after = self.tokens(agent)
            threshold = limits.threshold
            enough = trigger == "pressure" and threshold is not None and after < threshold
            summarized = forgot = False
            if not enough and self.config.summarize:
                summarized = await self._summarize(agent, cid, retain)
            elif not enough and self.config.forget:
                forgot = self._forget(agent, cid, _forget_retain(agent, trigger, limits, retain))
            end["outcome"] = (
                "summarized"
                if summarized
                else "forgot"
                if forgot
                else "pruned"
                if pruned
                else "nothing"
            )
            shrank = bool(pruned or summarized or forgot)
        except asyncio.CancelledError:
            end["outcome"] = "interrupted"
            raise
        except LlmError as exc:
            end["outcome"], end["error"] = "failed", f"{type(exc).__name__}: {exc}"
            shrank = False
        finally:
            end["tokens_after"] = self.tokens(agent)
            end["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
            agent.log(COMPACTION_END, end)
        if trigger != "manual":
            _check_fits(
                end["tokens_after"], limits.window, refused=trigger == "overflow", shrank=shrank
            )
        return shrank

    # -- prune ---------------------------------------------------------------------------------

    def _prune(self, agent: Agent, cid: str, retain: int) -> int:
        settings = self.config.prune
        messages = list(agent.session.messages())
        keys = list(agent.session.view_keys())
        # Pruning only shortens old tool results, so within a long turn it may reach the
        # request's own earlier tool rounds; the newest exchange stays whole.
        cut = _tail_start(messages, keys, retain, keep_request=False)
        pruned = saved = 0
        for index in range(cut):
            message = messages[index]
            if not isinstance(message, ToolMessage):
                continue
            content = message.content
            if len(content) <= settings.threshold_chars:
                continue
            if index + 1 < len(keys) and keys[index + 1] == keys[index]:
                continue  # part of a multi-message replacement: leave it whole
            if index > 0 and keys[index - 1] == keys[index]:
                continue
            head = content[: settings.head_chars]
            tail = content[len(content) - settings.tail_chars :] if settings.tail_chars else ""
            cut_chars = len(content) - len(head) - len(tail)
            short = f"{head}\n[... {cut_chars} characters pruned by compaction ...]\n{tail}"
            replacement = ToolMessage(message.call_id, short, message.is_error)
            agent.log(
                VIEW_REWRITE,
                ViewRewriteData(
                    surface=replace_op(keys[index], keys[index]),
                    messages=[message_to_data(replacement)],
                    by="compaction/prune",
                    compaction=cid,
                ),
            )
            pruned += 1
            saved += len(content) - len(short)
        if pruned:
            agent.log(
                COMPACTION_PRUNE, CompactionPruneData(id=cid, pruned=pruned, chars_saved=saved)
            )
        return pruned

    # -- summarize -----------------------------------------------------------------------------

    async def _summarize(self, agent: Agent, cid: str, retain: int) -> bool:
        config = self.config
        session = agent.session
        messages = list(session.messages())
        keys = list(session.view_keys())
        cut = _tail_start(messages, keys, retain, keep_request=True)
        if cut < _MIN_SPAN:
            return False
        span = messages[:cut]
        provider_name = config.summary_provider or agent.options.provider
        provider = agent.llm.get(provider_name)
        model = config.summary_model or (
            agent.options.model if config.summary_provider is None else None
        )
        model = model or provider.default_model
        request = LlmRequest(
            model=model,
            system=SUMMARY_SYSTEM,
            messages=(UserMessage(transcript(span, config.summary_item_chars)),),
            session_id=session.id,
            max_tokens=config.summary_max_tokens,
        )
        parts: list[str] = []
        async for chunk in agent.llm.stream(request, provider=provider.name):
            if isinstance(chunk, TextDelta):
                parts.append(chunk.text)
        text = "".join(parts).strip()
        if not text:
            raise LlmError("the summarizer answered with no text")
        summary = CompactionSummaryData(
            id=cid,
            text=text,
            start=keys[0],
            end=keys[cut - 1],
            messages=cut,
            model=model,
            # With the span, what rebuilds the summarizer's request from the log.
            system=SUMMARY_SYSTEM,
            item_chars=config.summary_item_chars,
        )
        agent.log(COMPACTION_SUMMARY, summary)
        agent.log(ev.USER_MESSAGE, summary_message_data(summary))
        # The dynamic context may have been summarized away: the next turn logs it again.
        agent.last_context.clear()
        return True

    # -- forget --------------------------------------------------------------------------------

    def _forget(self, agent: Agent, cid: str, retain: int) -> bool:
        session = agent.session
        messages = list(session.messages())
        keys = list(session.view_keys())
        cut = _tail_start(messages, keys, retain, keep_request=True)
        # The request keeps the dynamic context logged just before it (what the turn is about).
        request = _request_index(messages)
        keep = request
        while keep > 0 and _is_context(messages[keep - 1]):
            keep -= 1
        cut = _span_start(keys, min(cut, keep))
        # The view then opens on a user message, as every chat template expects after the system.
        while cut < keep and not (
            isinstance(messages[cut], UserMessage) and (cut == 0 or keys[cut] != keys[cut - 1])
        ):
            cut += 1
        # Context entries are logged only when they change: the newest text of each stays, or
        # the scene a turn logged once would leave the view while it still holds.
        current = set(agent.last_context.values())
        newest: dict[str, int] = {}
        for index in range(cut):
            message = messages[index]
            if _is_context(message) and message.content in current:
                newest[message.content] = index
        kept = [messages[index] for index in sorted(newest.values())]
        if cut < _MIN_SPAN or len(kept) == cut:
            return False
        agent.log(
            VIEW_REWRITE,
            ViewRewriteData(
                surface=replace_op(keys[0], keys[cut - 1]),
                messages=[message_to_data(message) for message in kept],
                by="compaction/forget",
                compaction=cid,
            ),
        )
        return True


def _is_context(message: Message) -> TypeGuard[UserMessage]:
    return isinstance(message, UserMessage) and message.source == _CONTEXT_SOURCE


def _forget_retain(agent: Agent, trigger: CompactionTrigger, limits: Limits, retain: int) -> int:
    """What forgetting keeps: the retained tail, and at most half of what the threshold leaves
    beside the header, so the next forgetting is many steps away rather than the next step.
    After the server refused a request the declared window was wrong: a quarter of the view."""
    if trigger == "overflow":
        retain = min(retain, messages_tokens(agent.session.messages()) // 4)
    threshold = limits.threshold
    if threshold is None:
        return retain
    room = threshold - estimate_tokens(agent.session.header(), ())
    return max(0, min(retain, room // 2))


def _check_fits(tokens: int, window: int | None, *, refused: bool, shrank: bool) -> None:
    """End the turn with an error naming the window when what must be kept cannot fit it."""
    if window is None:
        return
    if tokens >= window or (refused and not shrank):
        raise ContextOverflowError(
            f"the request does not fit the context window of {window} tokens even after"
            f" compaction: the newest message and the tool results it needs come to about"
            f" {tokens} tokens (estimated) and are never summarized away; send a shorter"
            " message, or use a model with a larger window (the compaction row's"
            " context_window, or the provider's profile)"
        )


def _tail_start(
    messages: Sequence[Message], keys: Sequence[int], retain: int, *, keep_request: bool
) -> int:
    """Index of the first message kept as it is: the newest `retain` tokens' worth, moved so
    that no tool result is cut from its call and no replaced span is split.

    The newest exchange (the last tool calls with their results) is always kept whole, and with
    `keep_request` so is everything from the request being answered on: a summary must never
    stand in for the question the next request asks the model to answer.
    """
    cut = _retained_start(messages, keys, retain)
    cut = min(cut, _span_start(keys, _exchange_start(messages)))
    if keep_request:
        cut = min(cut, _span_start(keys, _request_index(messages)))
    return cut


def _request_index(messages: Sequence[Message]) -> int:
    """Index of the newest user message that asks something (not the dynamic context nor a
    summary), or len(messages) when there is none."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, UserMessage) and message.source not in _NOT_A_REQUEST:
            return index
    return len(messages)


def _exchange_start(messages: Sequence[Message]) -> int:
    """Index of the assistant message whose tool calls the trailing tool results answer, or
    len(messages) when the view does not end in tool results."""
    index = len(messages)
    while index > 0 and isinstance(messages[index - 1], ToolMessage):
        index -= 1
    if index == len(messages):
        return index
    return index - 1 if index > 0 else 0


def _span_start(keys: Sequence[int], index: int) -> int:
    """`index` moved back to the first message of the replaced span it is in."""
    while 0 < index < len(keys) and keys[index] == keys[index - 1]:
        index -= 1
    return index


def _retained_start(messages: Sequence[Message], keys: Sequence[int], retain: int) -> int:
    budget = retain
    cut = len(messages)
    while cut > 0:
        cost = messages_tokens((messages[cut - 1],))
        if cost > budget:
            break
        budget -= cost
        cut -= 1
    while cut < len(messages) and (
        isinstance(messages[cut], ToolMessage) or (cut > 0 and keys[cut] == keys[cut - 1])
    ):
        cut += 1
    return cut


def transcript(messages: Sequence[Message], item_chars: int) -> str:
    """The span as plain text for the summarizer (each message cut to `item_chars`)."""
    lines: list[str] = ["Summarize this part of the session:", ""]
    for message in messages:
        if isinstance(message, UserMessage):
            lines.append(f"[{message.source}] {_cut(message.content, item_chars)}")
        elif isinstance(message, AssistantMessage):
            if message.text:
                lines.append(f"[assistant] {_cut(message.text, item_chars)}")
            for call in message.tool_calls:
                lines.append(f"[assistant calls {call.name}] {_cut(call.arguments, item_chars)}")
        else:
            mark = "tool error" if message.is_error else "tool result"
            lines.append(f"[{mark}] {_cut(message.content, item_chars)}")
    return "\n".join(lines)


def rebuild_summary_requests(events: Sequence[SessionEvent]) -> list[tuple[str, str]]:
    """(system, prompt) of every summarizer request a log records, rebuilt from the view as it
    was when the summary was written."""
    rebuilt: list[tuple[str, str]] = []
    projection = Projection()
    for index, event in enumerate(events):
        if event.type != COMPACTION_SUMMARY:
            continue
        data = payload(event, COMPACTION_SUMMARY)
        projection.feed(events[:index])
        span = [
            message
            for message, key in zip(projection.messages, projection.keys, strict=True)
            if data["start"] <= key <= data["end"]
        ]
        rebuilt.append((data["system"], transcript(span, data["item_chars"])))
    return rebuilt


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[: limit // 2]} [...{len(text) - limit} characters...] {text[-limit // 2 :]}"


__all__ = ["Compactor", "message_chars", "rebuild_summary_requests", "transcript"]
