"""The mock LLM server: OpenAI-compatible HTTP on raw asyncio, scripted per conversation."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import replace
from types import TracebackType
from typing import Any, Self

from ..responder.steps import Step, ToolCalls, parse_steps
from .capabilities import FULL, MockCapabilities, continued
from .conversations import DEFAULT_CONVERSATION, ConversationBook, Exhausted
from .play import Exchange, play
from .requests import (
    RecordedRequest,
    RequestError,
    decode_json_body,
    make_chat_request,
    parse_chat_body,
)
from .responder import Responder, ResponderError, ask_responder
from .scripts import ScriptFile
from .shapes import error_body, models_body
from .usage import CHARS_PER_TOKEN, canonical_prompt, prompt_usage
from .wire import HttpRequest, MalformedHttpError, ResponseWriter, read_request

SESSION_HEADER = "x-star-harness-session"
"""The request header that names a request's conversation (case-insensitive)."""

_CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
_MODEL_PATHS = frozenset({"/v1/models", "/models"})
_HEAD_LIMIT = 1024 * 1024
_log = logging.getLogger("starharness.mockllm")

StepLike = Step | Mapping[str, Any] | str
"""A step model, a mapping with `behaviour`, or a bare behaviour name."""


class MockLlmServer:
    """An OpenAI-compatible chat-completions server whose answers are scripted per conversation.

    Use `async with MockLlmServer() as mock:`; point clients at `mock.base_url`.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        api_key: str | None = None,
        responder: Responder | None = None,
        repeat_last: bool = False,
        models: Iterable[str] = ("mock-model",),
        time_scale: float = 1.0,
        chars_per_token: int = CHARS_PER_TOKEN,
        keep_requests: int | None = None,
        keep_conversations: int | None = None,
        plays: MockCapabilities = FULL,
        keep_alive_s: float | None = None,
    ) -> None:
        """`keep_requests` bounds `requests` to the latest ones (None: all, 0: none);
        `keep_conversations` bounds the conversations not named by `script` (see the docs);
        `plays` is the kind of server it behaves as (see `capabilities`); `keep_alive_s` closes
        a connection left idle that long after an answer, as servers do (None: never)."""
        if keep_alive_s is not None and keep_alive_s < 0:
            raise ValueError(f"keep_alive_s must not be negative (or None), got {keep_alive_s}")
        if time_scale < 0:
            raise ValueError(f"time_scale must not be negative, got {time_scale}")
        if chars_per_token < 1:
            raise ValueError(f"chars_per_token must be at least 1, got {chars_per_token}")
        if keep_requests is not None and keep_requests < 0:
            raise ValueError(f"keep_requests must be 0 or more (or None), got {keep_requests}")
        if keep_conversations is not None and keep_conversations < 1:
            raise ValueError(
                f"keep_conversations must be at least 1 (or None), got {keep_conversations}"
            )
        self._host = host
        self._plays = plays
        self._keep_alive_s = keep_alive_s
        self._requested_port = port
        self._api_key = api_key
        self._responder = responder
        self._models = tuple(models)
        self._time_scale = time_scale
        self._chars_per_token = chars_per_token
        self._book = ConversationBook(repeat_last=repeat_last, keep=keep_conversations)
        self._requests: deque[RecordedRequest] = deque(maxlen=keep_requests)
        self._connections: set[asyncio.Task[Any]] = set()
        self._server: asyncio.Server | None = None
        self._port = 0
        self._sequence = 0
        self._accepted = 0

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start listening (port 0 picks a free port)."""
        if self._server is not None:
            raise RuntimeError("mock LLM server is already started")
        self._server = await asyncio.start_server(
            self._on_connection, self._host, self._requested_port, limit=_HEAD_LIMIT
        )
        self._port = int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        """Stop listening and end every open connection (stalled ones included)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        connections = list(self._connections)
        for task in connections:
            task.cancel()
        await asyncio.gather(*connections, return_exceptions=True)
        await server.wait_closed()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- where to point clients ----------------------------------------------------------------

    @property
    def plays(self) -> MockCapabilities:
        """The kind of server the mock behaves as."""
        return self._plays

    @property
    def port(self) -> int:
        """The bound port (0 before start)."""
        return self._port

    @property
    def origin(self) -> str:
        """`http://host:port` without a path."""
        return f"http://{self._host}:{self._port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, ending in `/v1`."""
        return f"{self.origin}/v1"

    # -- scripting -----------------------------------------------------------------------------

    def script(
        self, session_id: str, steps: Iterable[StepLike], *, repeat_last: bool | None = None
    ) -> None:
        """Bind steps to the conversation `session_id` (appended if it already has some)."""
        self._book.bind(session_id, parse_steps(steps), repeat_last)

    def script_next(self, steps: Iterable[StepLike], *, repeat_last: bool | None = None) -> None:
        """Queue steps for the next conversation whose session id was not seen yet."""
        self._book.queue_next(parse_steps(steps), repeat_last)

    def script_each(self, steps: Iterable[StepLike], *, repeat_last: bool | None = None) -> None:
        """Give every new conversation without another script its own copy of these steps."""
        self._book.set_each(parse_steps(steps), repeat_last)

    def load_script(self, script: ScriptFile) -> None:
        """Apply a script file: its sessions, next-conversation queue and `each` steps."""
        # The file can only turn repeat_last on; otherwise the server's default applies.
        repeat_last = True if script.repeat_last else None
        for session_id, steps in script.sessions.items():
            self._book.bind(session_id, steps, repeat_last)
        for steps in script.next:
            self._book.queue_next(steps, repeat_last)
        if script.each is not None:
            self._book.set_each(script.each, repeat_last)

    # -- inspection ----------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received (the latest `keep_requests` if set), in arrival order."""
        return list(self._requests)

    @property
    def conversation_count(self) -> int:
        """How many conversations the mock keeps state for."""
        return len(self._book)

    @property
    def connections_accepted(self) -> int:
        """TCP connections accepted since start: with keep-alive, fewer than requests."""
        return self._accepted

    @property
    def connections_open(self) -> int:
        """TCP connections the mock is serving now (idle keep-alive ones included)."""
        return len(self._connections)

    def requests_for(self, conversation: str) -> list[RecordedRequest]:
        """The requests routed to `conversation`."""
        return [record for record in self._requests if record.conversation == conversation]

    def assert_complete(self) -> None:
        """Raise AssertionError naming every script with steps that were never played."""
        incomplete = self._book.incomplete()
        if incomplete:
            raise AssertionError(
                "mock LLM scripts not fully consumed:\n  " + "\n  ".join(incomplete)
            )

    # -- serving -------------------------------------------------------------------------------

    def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # A plain callback, so the server owns (and on close cancels and awaits) each task.
        self._accepted += 1
        task = asyncio.create_task(self._serve_connection(reader, writer))
        self._connections.add(task)
        task.add_done_callback(self._connections.discard)

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        out = ResponseWriter(writer)
        served = 0
        try:
            while out.reusable:
                try:
                    async with asyncio.timeout(self._keep_alive_s if served else None):
                        request = await read_request(reader, writer)
                except TimeoutError:
                    break  # idle past keep_alive_s: hang up, as a server's idle timeout does
                except MalformedHttpError as exc:
                    out.keep_alive = False
                    body = error_body(str(exc), "invalid_request_error", "malformed_http")
                    await out.send(400, body, "application/json")
                    break
                if request is None:
                    break
                out.keep_alive = request.keep_alive
                served += 1
                await self._dispatch(request, reader, out)
        except (ConnectionError, TimeoutError):
            pass
        except Exception:
            # A bug in one answer must not take the server down: log it and drop the connection.
            _log.exception("mock LLM failed while serving a connection")
        finally:
            writer.close()
            # Counted open until the socket is shut: `close` only schedules it, and a test that
            # waits for `connections_open` to reach 0 must find the client's end already told.
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _dispatch(
        self, request: HttpRequest, reader: asyncio.StreamReader, out: ResponseWriter
    ) -> None:
        decoded: Any = None
        decode_error: RequestError | None = None
        if request.body:
            try:
                decoded = decode_json_body(request.body)
            except RequestError as exc:
                decode_error = exc
                decoded = request.body.decode("utf-8", "replace")
        record = RecordedRequest(request.method, request.path, dict(request.headers), decoded)
        self._requests.append(record)
        if request.path in _CHAT_PATHS:
            allowed = "POST"
        elif request.path in _MODEL_PATHS:
            allowed = "GET"
        else:
            message = f"Unknown request URL: {request.method} {request.path}"
            await self._fail(out, record, 404, message, "invalid_request_error", "unknown_url")
            return
        if request.method != allowed:
            message = f"{request.path} accepts {allowed}, not {request.method}"
            await self._fail(
                out, record, 405, message, "invalid_request_error", "method_not_allowed"
            )
            return
        if not self._authorized(request):
            message = "Incorrect API key provided (mock): send `Authorization: Bearer <key>`"
            await self._fail(out, record, 401, message, "invalid_request_error", "invalid_api_key")
            return
        if allowed == "GET":
            await out.send(200, models_body(self._models), "application/json")
            return
        if decode_error is not None:
            await self._fail(out, record, 400, str(decode_error), "invalid_request_error", None)
            return
        await self._chat(request, decoded, record, reader, out)

    def _authorized(self, request: HttpRequest) -> bool:
        if self._api_key is None:
            return True
        return request.headers.get("authorization", "") == f"Bearer {self._api_key}"

    async def _chat(
        self,
        request: HttpRequest,
        decoded: Any,
        record: RecordedRequest,
        reader: asyncio.StreamReader,
        out: ResponseWriter,
    ) -> None:
        key = request.headers.get(SESSION_HEADER, "").strip() or DEFAULT_CONVERSATION
        record.conversation = key
        try:
            parsed = parse_chat_body(decoded)
        except RequestError as exc:
            await self._fail(out, record, 400, str(exc), "invalid_request_error", None, exc.param)
            return
        refused = self._plays.refusal(parsed.raw)
        if refused is not None:
            status, message = refused
            kind = "server_error" if status >= 500 else "invalid_request_error"
            await self._fail(out, record, status, message, kind, "mock_capability")
            return
        conversation = self._book.conversation(key)
        prompt = canonical_prompt(parsed.raw.get("tools") or (), parsed.raw["messages"])
        prompt_tokens, cached = prompt_usage(
            conversation.last_prompt, prompt, self._chars_per_token
        )
        overflow = self._plays.overflow(parsed.raw, prompt_tokens)
        if overflow is not None:
            status, message = overflow
            await self._fail(
                out, record, status, message, "invalid_request_error", "context_length_exceeded"
            )
            return
        turn = conversation.turns
        conversation.turns += 1
        conversation.last_prompt = prompt
        outcome = self._book.take(conversation)
        if isinstance(outcome, Exhausted):
            await self._fail(out, record, 500, outcome.message, "mock_error", outcome.code)
            return
        if outcome is None:
            if self._responder is None:
                message = (
                    f"mock LLM has no script for conversation {key!r} and no responder "
                    f"(route conversations with the X-Star-Harness-Session header)"
                )
                await self._fail(out, record, 500, message, "mock_error", "mock_no_script")
                return
            chat_request = make_chat_request(
                parsed, conversation=key, turn=turn, headers=record.headers
            )
            history, begun = self._plays.begun_call(chat_request.messages, chat_request.tool_choice)
            if begun is not None or not self._plays.shows_tool_results:
                chat_request = replace(chat_request, messages=self._plays.visible(history))
            try:
                outcome = await ask_responder(self._responder, chat_request)
            except ResponderError as exc:
                _log.error("%s", exc, exc_info=exc.__cause__)
                await self._fail(out, record, 500, str(exc), "mock_error", "mock_responder_failed")
                return
            if begun is not None:
                outcome = _continue_call(outcome, begun)
        record.step = outcome
        self._sequence += 1
        exchange = Exchange(
            out=out,
            reader=reader,
            stream=parsed.chat.stream,
            model=parsed.chat.model,
            completion_id=f"chatcmpl-mock-{self._sequence}",
            created=int(time.time()),
            prompt_tokens=prompt_tokens,
            cached_tokens=cached,
            time_scale=self._time_scale,
            chars_per_token=self._chars_per_token,
        )
        await play(exchange, outcome)

    async def _fail(
        self,
        out: ResponseWriter,
        record: RecordedRequest,
        status: int,
        message: str,
        error_type: str,
        code: str | None,
        param: str | None = None,
    ) -> None:
        record.error = message
        await out.send(status, error_body(message, error_type, code, param), "application/json")


def _continue_call(outcome: Step, begun: str) -> Step:
    """The responder's answer as the continuation of the call the request began: a single
    call's first string begins with the begun text (see `continued`)."""
    if not isinstance(outcome, ToolCalls) or len(outcome.calls) != 1:
        return outcome
    (call,) = outcome.calls
    arguments = continued(begun, call.arguments)
    return outcome.model_copy(update={"calls": [call.model_copy(update={"arguments": arguments})]})
