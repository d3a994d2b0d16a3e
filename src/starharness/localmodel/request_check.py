"""Chat requests the chat handler would refuse, answered 400 before the server answers at all.

llama-cpp-python's server calls a chat handler inside its route, and for a streamed request
only after it has sent `200` and begun the event stream: a request the handler refuses (a
malformed message, a forced tool that is not among the tools, a begun call that does not
continue its opening) came back as a 500 or as a stream that broke off, and a client could not
tell its own mistake from the server's. `RequestCheck` wraps the server's ASGI app, reads the
body of each `POST` to the chat endpoint, and asks `check` what is wrong with it: a reason
becomes a `400` in the OpenAI error shape, naming it; nothing wrong, and the app gets the same
body. A body nested past the JSON parser's depth is a 400 too (the server answered it with a
bare 500); one that is not JSON, or not an object, goes to the app, whose own validation
answers it.

Nothing here imports llama_cpp: the check is the handler's own (`llama_child`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final, cast

from .idle_work import ASGIApp, Message, Receive, Scope, Send

CHAT_PATH: Final = "/v1/chat/completions"

RequestProblem = Callable[[Mapping[str, Any]], "str | None"]
"""What is wrong with a chat request's body (a reason for the client), or None."""


class RequestCheck:
    """An ASGI app that answers chat requests `check` finds wrong with 400, and passes every
    other request to `app` as it came."""

    def __init__(self, app: ASGIApp, check: RequestProblem, *, path: str = CHAT_PATH) -> None:
        self._app = app
        self._check = check
        self._path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != self._path:
            await self._app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        problem = self._problem(body)
        if problem is not None:
            await _refuse(send, problem)
            return
        given = False

        async def replay() -> Message:
            nonlocal given
            if given:
                return await receive()
            given = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self._app(scope, replay, send)

    def _problem(self, body: bytes) -> str | None:
        try:
            data = json.loads(body)
        except RecursionError:
            return "the request body is nested too deeply to read"
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        return self._check(cast(dict[str, Any], data))


async def _refuse(send: Send, reason: str) -> None:
    error = {"message": reason, "type": "invalid_request_error", "param": None, "code": None}
    payload = json.dumps({"error": error}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(payload))]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
