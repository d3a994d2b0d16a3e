"""JSON-RPC 2.0 envelopes: parse one incoming message, build responses and notifications."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, cast

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
MODEL_UNAVAILABLE: Final = -32007

MAX_LINE: Final = 16 * 1024 * 1024
"""The longest message, in UTF-8 bytes (a prompt with a large paste fits); a longer line is
answered once with INVALID_REQUEST and skipped whole."""
MAX_DEPTH: Final = 64
"""How deeply arrays and objects may nest in one message (the protocol's own need no more than
ten); deeper is INVALID_REQUEST, however deep, so no parser or validator recurses past it."""
MAX_ID: Final = 2**53 - 1
"""The largest integer id (either sign): what a JavaScript client can give back exactly."""
MAX_ID_CHARS: Final = 256
"""The longest string id."""

RequestId = int | str | None

_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


class RpcError(StarHarnessError):
    """A failure the peer sees as a JSON-RPC error object."""

    def __init__(
        self, code: int, message: str, data: Any = None, *, request_id: RequestId = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.request_id = request_id
        """The id of the message refused, when it could be read (its answer carries it)."""


@dataclass(frozen=True, slots=True)
class Request:
    """One well-formed call; `id` is absent for a notification (then nothing is answered)."""

    method: str
    params: Any
    id: RequestId
    has_id: bool


def decode_line(text: str) -> Any:
    """One line as JSON within the limits above; RpcError with PARSE_ERROR for text that is not
    JSON, INVALID_REQUEST for JSON nested past MAX_DEPTH or holding an integer longer than
    Python converts (4,300 digits). Never raises anything else."""
    try:
        message = json.loads(text)
    except json.JSONDecodeError as error:
        raise RpcError(PARSE_ERROR, f"not JSON: {error}") from None
    except RecursionError:
        raise RpcError(INVALID_REQUEST, _too_deep()) from None
    except ValueError:  # an integer past int()'s digit limit: valid JSON, refused as too big
        digits = sys.get_int_max_str_digits()
        raise RpcError(INVALID_REQUEST, f"a number has more than {digits} digits") from None
    # Counting brackets (in C) spares the walk for nearly every line: it cannot be deeper.
    if text.count("[") + text.count("{") > MAX_DEPTH and _deeper_than(message, MAX_DEPTH):
        raise RpcError(INVALID_REQUEST, _too_deep(), request_id=_readable_id(message))
    return message


def parse_message(text: str) -> Request:
    """Parse one line; raises RpcError with the JSON-RPC code that says what is wrong (and the
    message's id, when it has a valid one). Never raises anything else."""
    message = decode_line(text)
    if isinstance(message, list):
        raise RpcError(INVALID_REQUEST, "batches are not supported; send one request per line")
    if not isinstance(message, dict):
        raise RpcError(INVALID_REQUEST, "a request must be a JSON object")
    fields: dict[str, Any] = message  # pyright: ignore[reportUnknownVariableType]
    request_id = _readable_id(fields)
    if fields.get("jsonrpc") != "2.0":
        raise RpcError(INVALID_REQUEST, 'a request needs "jsonrpc": "2.0"', request_id=request_id)
    has_id = "id" in fields
    if has_id and not valid_id(fields["id"]):
        raise RpcError(INVALID_REQUEST, ID_RULE)
    method = fields.get("method")
    if not isinstance(method, str) or not method:
        raise RpcError(INVALID_REQUEST, "method must be a non-empty string", request_id=request_id)
    params = fields.get("params", {})
    if not isinstance(params, dict):
        raise RpcError(
            INVALID_PARAMS,
            "params must be an object (by-name parameters)",
            request_id=request_id,
        )
    return Request(method, params, request_id, has_id)


ID_RULE: Final = (
    f"id must be a string of at most {MAX_ID_CHARS} characters, an integer within ±{MAX_ID} or null"
)


def valid_id(value: object) -> bool:
    """A JSON-RPC id this server answers to: null, a bounded integer or a short string."""
    if value is None:
        return True
    if type(value) is int:
        return -MAX_ID <= value <= MAX_ID
    return isinstance(value, str) and len(value) <= MAX_ID_CHARS


def _readable_id(message: Any) -> RequestId:
    if isinstance(message, dict):
        fields: dict[str, Any] = message  # pyright: ignore[reportUnknownVariableType]
        candidate: Any = fields.get("id")
        if valid_id(candidate):
            return candidate
    return None


def _too_deep() -> str:
    return f"arrays and objects are nested more than {MAX_DEPTH} deep"


def _deeper_than(value: object, limit: int) -> bool:
    """Whether containers nest past `limit`, without recursing (the value may be deep)."""
    pending: list[tuple[object, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children: Iterable[object]
        if isinstance(item, dict):
            children = cast("dict[str, object]", item).values()
        elif isinstance(item, list):
            children = cast("list[object]", item)
        else:
            continue
        if depth > limit:
            return True
        pending.extend((child, depth + 1) for child in children if _is_container(child))
    return False


def _is_container(value: object) -> bool:
    return isinstance(value, dict | list)


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
