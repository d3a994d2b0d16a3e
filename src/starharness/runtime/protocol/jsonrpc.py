"""JSON-RPC 2.0 envelopes: parse one incoming message, build responses and notifications."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel

from ..errors import StarHarnessError
from .models import UPDATE_METHOD

PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603
# Application errors (the -32000 to -32099 range is the server's to define).
SESSION_NOT_FOUND: Final = -32001
SESSION_BUSY: Final = -32002
NOT_INITIALIZED: Final = -32003
SESSION_EXISTS: Final = -32004
NO_SUCH_APPROVAL: Final = -32005
SHUTTING_DOWN: Final = -32006

RequestId = int | str | None

_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class RpcError(StarHarnessError):
    """A failure the peer sees as a JSON-RPC error object."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


@dataclass(frozen=True, slots=True)
class Request:
    """One well-formed call; `id` is absent for a notification (then nothing is answered)."""

    method: str
    params: Any
    id: RequestId
    has_id: bool


def parse_message(text: str) -> Request:
    """Parse one line; raises RpcError with the JSON-RPC code that says what is wrong."""
    try:
        message = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise RpcError(PARSE_ERROR, f"not JSON: {error}") from None
    if isinstance(message, list):
        raise RpcError(INVALID_REQUEST, "batches are not supported; send one request per line")
    if not isinstance(message, dict):
        raise RpcError(INVALID_REQUEST, "a request must be a JSON object")
    fields: dict[str, Any] = message  # pyright: ignore[reportUnknownVariableType]
    if fields.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, 'a request needs "jsonrpc": "2.0"')
    has_id = "id" in fields
    request_id = fields.get("id")
    if has_id and not _valid_id(request_id):
        raise RpcError(INVALID_REQUEST, "id must be a string, an integer or null")
    method = fields.get("method")
    if not isinstance(method, str) or not method:
        raise RpcError(INVALID_REQUEST, "method must be a non-empty string")
    params = fields.get("params", {})
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object (by-name parameters)")
    return Request(method, params, request_id, has_id)


def request_id_of(text: str) -> RequestId:
    """The id of a message that failed to parse as a request, when one can be read (else null)."""
    try:
        message = json.loads(text)
    except ValueError:
        return None
    if isinstance(message, dict):
        fields: dict[str, Any] = message  # pyright: ignore[reportUnknownVariableType]
        candidate: Any = fields.get("id")
        if _valid_id(candidate):
            return candidate
    return None


def _valid_id(value: object) -> bool:
    return value is None or isinstance(value, str) or (type(value) is int)


def result_line(request_id: RequestId, result_json: str) -> str:
    """A response line around an already-encoded result."""
    return f'{{"jsonrpc":"2.0","id":{_DUMPS(request_id)},"result":{result_json}}}'


def error_line(request_id: RequestId, error: RpcError) -> str:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return _DUMPS({"jsonrpc": "2.0", "id": request_id, "error": body})


def notification_line(method: str, params_json: str) -> str:
    return f'{{"jsonrpc":"2.0","method":{_DUMPS(method)},"params":{params_json}}}'


def request_line(request_id: RequestId, method: str, params_json: str) -> str:
    return (
        f'{{"jsonrpc":"2.0","id":{_DUMPS(request_id)},"method":{_DUMPS(method)},'
        f'"params":{params_json}}}'
    )


def update_line(update: BaseModel) -> str:
    """A `session/update` notification line for one update."""
    return notification_line(
        UPDATE_METHOD, update.model_dump_json(by_alias=True, exclude_none=True)
    )
