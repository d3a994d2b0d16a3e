"""Run one step's model request: header, request hooks, streaming, and the assistant message."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from ..llm.types import LlmRequest, Message, StreamChunk, ToolSchema
from ..prompt import PROMPT
from ..session import event_types as ev
from ..session import freeze_data
from ..telemetry import request_span
from ..tools import TOOLS
from .hooks import REQUEST, OutgoingRequest
from .step import StepAccumulator, StepResult, chunk_data, message_data, request_context_data
from .view_log import log_view_change, verify_request

if TYPE_CHECKING:
    from ..llm import RetryInfo
    from .agent import Agent

_NO_TOOLS: tuple[ToolSchema, ...] = ()
_TOOL_DATA_LIMIT = 1024
_tool_data: dict[ToolSchema, ev.ToolHeader] = {}
"""Each shared schema's frozen header entry, so a new session does not copy every schema."""


def _tool_header(schema: ToolSchema) -> ev.ToolHeader:
    data = _tool_data.get(schema)
    if data is None:
        if len(_tool_data) >= _TOOL_DATA_LIMIT:
            _tool_data.clear()
        header = ev.ToolHeader(
            name=schema.name, description=schema.description, parameters=schema.parameters
        )
        # Frozen once here, so each header event shares it instead of copying the schema.
        data = _tool_data[schema] = cast(ev.ToolHeader, freeze_data(header))
    return data


def _static_part(agent: Agent) -> tuple[str, Sequence[ToolSchema]]:
    ctx = agent.ctx
    prompt = ctx.maybe(PROMPT)
    tools = ctx.maybe(TOOLS)
    system = prompt.assemble(ctx) if prompt is not None else ""
    return system, (tools.schemas() if tools is not None else _NO_TOOLS)


def _log_header_if_changed(agent: Agent, system: str, tools: Sequence[ToolSchema]) -> None:
    last = agent.header
    if last is not None and last[0] is system and last[1] is tools:
        return
    if last is not None and last[0] == system and list(last[1]) == list(tools):
        agent.header = (system, tools)
        return
    reason = "initial" if last is None and not agent.resumed else "change"
    if last is None and agent.resumed:
        reason = "resume"
    agent.header = (system, tools)
    agent.log(
        ev.REQUEST_HEADER,
        ev.RequestHeaderData(system=system, tools=[_tool_header(t) for t in tools], reason=reason),
    )


async def run_step(
    agent: Agent, turn: int, step: int, messages: Sequence[Message]
) -> StepResult | None:
    """Send one request and fold its stream; None when a request hook vetoed it."""
    ctx = agent.ctx
    llm = agent.llm
    provider_name = agent.options.provider
    provider = llm.get(provider_name)
    model = agent.options.model or provider.default_model
    system, tools = _static_part(agent)
    opts = agent.options
    request = LlmRequest(
        model=model,
        system=system,
        messages=messages,
        session_id=agent.session.id,
        tools=tools,
        tool_choice=opts.tool_choice,
        max_tokens=opts.max_tokens,
        temperature=opts.temperature,
    )
    if ctx.events.has_listeners(REQUEST):
        # A copy: a listener changing the list in place must not change the projection.
        request.messages = list(messages)
        outgoing = await ctx.events.waterfall(REQUEST, OutgoingRequest(agent, turn, step, request))
        if outgoing is None:
            return None
        request = outgoing.request
        if log_view_change(agent, turn, step, request.messages, REQUEST.name):
            request.messages = agent.session.messages()
        else:
            request.messages = messages
    _log_header_if_changed(agent, request.system, request.tools)
    verify_request(agent, request, agent.verify_view)
    context = request_context_data(provider.name, request)
    quirk = llm.quirk(request, provider=provider.name)
    if quirk is not None:
        # The server cannot take the request as asked: the log says what was sent instead.
        context["quirk"] = quirk
    agent.log(ev.REQUEST_CONTEXT, context)
    agent.log(ev.STEP_START, ev.StepData(turn=turn, step=step))

    acc = StepAccumulator()
    log_chunks = opts.log_chunks
    log = agent.log
    holder: list[StepAccumulator] = [acc]

    telemetry = agent.telemetry
    if telemetry is not None:
        telemetry.record_request(provider.name, model)

    def on_retry(info: RetryInfo) -> None:
        if telemetry is not None:
            telemetry.record_retry(provider.name, model)
        log(
            ev.LLM_RETRY,
            ev.LlmRetryData(
                turn=turn,
                step=step,
                attempt=info.attempt,
                delay_s=info.delay_s,
                error=str(info.error),
                after_output=info.after_output,
            ),
        )
        # Output of a failed attempt is discarded; observers see the retry event and reset.
        holder[0] = StepAccumulator()

    chunk_type = ev.ASSISTANT_CHUNK
    with request_span(provider.name, model):
        try:
            chunk: StreamChunk
            async for chunk in llm.stream(request, provider=provider.name, on_retry=on_retry):
                holder[0].add(chunk)
                if log_chunks:
                    # An annotated literal, not the TypedDict's call: this runs for every chunk.
                    logged: ev.AssistantChunkData = {
                        "turn": turn,
                        "step": step,
                        "chunk": chunk_data(chunk),
                    }
                    log(chunk_type, logged)
        except (asyncio.CancelledError, Exception) as exc:
            if telemetry is not None and not isinstance(exc, asyncio.CancelledError):
                telemetry.record_error(type(exc).__name__)
            partial = holder[0]
            if partial.text():
                data = message_data(
                    turn, step, StepResult(partial.message(drop_calls=True), None, "aborted")
                )
                data["interrupted"] = True
                log(ev.ASSISTANT_MESSAGE, data)
            raise
    result = holder[0].result()
    usage = result.usage
    if telemetry is not None and usage is not None:
        telemetry.record_usage(
            provider.name,
            model,
            input_tokens=usage.input,
            output_tokens=usage.output,
            cache_read_tokens=usage.cache_read,
        )
    log(ev.ASSISTANT_MESSAGE, message_data(turn, step, result))
    return result
