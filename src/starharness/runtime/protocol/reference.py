"""docs/session-protocol.md, generated from the models (like the schema, checked in CI).

Write it with `python -m starharness.runtime.protocol.schema_gen --reference OUT`.
"""

from __future__ import annotations

import json
from typing import Any

from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_DEPTH,
    MAX_ID,
    MAX_ID_CHARS,
    MAX_LINE,
    METHOD_NOT_FOUND,
    MODEL_UNAVAILABLE,
    NO_SUCH_APPROVAL,
    NOT_INITIALIZED,
    PARSE_ERROR,
    SESSION_BUSY,
    SESSION_EXISTS,
    SESSION_NOT_FOUND,
    SHUTTING_DOWN,
)
from .models import METHODS, PROTOCOL_VERSION, UPDATE_METHOD
from .schema import build_schema

_ERRORS = [
    (PARSE_ERROR, "the line is not JSON"),
    (
        INVALID_REQUEST,
        'not a JSON-RPC 2.0 request (no `"jsonrpc": "2.0"`, no method, a batch, not an object), '
        "or past a limit above (too long, too deep, a bad id, a number too long)",
    ),
    (METHOD_NOT_FOUND, "a method other than the four"),
    (INVALID_PARAMS, "params that do not match the method's model (the message names the field)"),
    (INTERNAL_ERROR, "a bug: the request failed inside the server (logged on stderr)"),
    (SESSION_NOT_FOUND, "no such stored session, or not open on this connection"),
    (SESSION_BUSY, "the session runs a turn already, or another connection has it open"),
    (NOT_INITIALIZED, "a request before `initialize`"),
    (SESSION_EXISTS, "`create` with an id that is taken"),
    (NO_SUCH_APPROVAL, "an answer for a call that is not waiting for one"),
    (
        SHUTTING_DOWN,
        "a request after `shutdown` (`initialize` too), or one still running when the server "
        "stopped",
    ),
    (
        MODEL_UNAVAILABLE,
        "`prompt` while no model is usable (no key): the message names the variable or flag to "
        "set; `initialize` reports it in `model`",
    ),
]

_INTRO = f"""\
# The session protocol (reference)

<!-- Generated from starharness.runtime.protocol.models; do not edit by hand. Regenerate with
`uv run python -m starharness.runtime.protocol.schema_gen --reference docs/session-protocol.md`. -->

One typed session API, three transports: `star-harness rpc` (JSON-RPC 2.0 over stdio, one
message per line), the web UI's WebSocket at `ws://127.0.0.1:3080/rpc` (one message per text
frame) and, through the same host, `star-harness acp`. Protocol version {PROTOCOL_VERSION}.
The JSON Schema of every message is [session-protocol.schema.json](session-protocol.schema.json);
the Python client is `starharness.sdk` ([sdk.md](sdk.md)).

There are exactly four requests: {", ".join(f"`{m}`" for m in METHODS)}. The server sends one
notification, `{UPDATE_METHOD}`, whose `params.kind` says what happened. Requests run
concurrently: while `prompt` waits for its turn to end, the client answers approvals with
`session` (`action: answer`). The updates of a turn arrive before the `prompt` answer.

A typical exchange (`>` client, `<` server):

```
> {{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":1}}}}
< {{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":1,"server":{{...}},"profile":"task","tools":[...],"approvals":true}}}}
> {{"jsonrpc":"2.0","id":2,"method":"session","params":{{"action":"create"}}}}
< {{"jsonrpc":"2.0","id":2,"result":{{"action":"create","sessionId":"rpc-1a2b3c4d5e6f","history":[],"pendingApprovals":[]}}}}
> {{"jsonrpc":"2.0","id":3,"method":"prompt","params":{{"sessionId":"rpc-1a2b3c4d5e6f","text":"write notes.txt"}}}}
< {{"jsonrpc":"2.0","method":"session/update","params":{{"kind":"turn.start","sessionId":"rpc-1a2b3c4d5e6f","turn":1}}}}
< {{"jsonrpc":"2.0","method":"session/update","params":{{"kind":"tool.call","callId":"call_1","name":"write_file",...}}}}
< {{"jsonrpc":"2.0","method":"session/update","params":{{"kind":"approval.asked","callId":"call_1","tool":"write_file",...}}}}
> {{"jsonrpc":"2.0","id":4,"method":"session","params":{{"action":"answer","sessionId":"rpc-1a2b3c4d5e6f","callId":"call_1","answer":"allow_once"}}}}
< {{"jsonrpc":"2.0","id":4,"result":{{"action":"answer","sessionId":"rpc-1a2b3c4d5e6f"}}}}
< {{"jsonrpc":"2.0","method":"session/update","params":{{"kind":"approval.decided","decision":"allowed_once",...}}}}
< {{"jsonrpc":"2.0","method":"session/update","params":{{"kind":"tool.result","callId":"call_1","isError":false,...}}}}
< {{"jsonrpc":"2.0","method":"session/update","params":{{"kind":"text.delta","text":"Done.",...}}}}
< {{"jsonrpc":"2.0","method":"session/update","params":{{"kind":"turn.end","reason":"completed",...}}}}
< {{"jsonrpc":"2.0","id":3,"result":{{"sessionId":"rpc-1a2b3c4d5e6f","turn":1,"reason":"completed","text":"Done."}}}}
> {{"jsonrpc":"2.0","id":5,"method":"shutdown","params":{{}}}}
< {{"jsonrpc":"2.0","id":5,"result":{{}}}}
```

Bad input gets a JSON-RPC error and the connection lives on. A request without an `id` is a
notification: it runs, and nothing is answered. Batches are refused. Unknown fields are ignored.
Every line gets exactly one answer, except a valid notification (none) and an empty line
(skipped). An error for a message whose id cannot be read (not JSON, not an object, a bad id)
has `"id": null`.

`rpc` asks the client about every call that needs approval; when the client goes away or closes
the session while a question waits, the session is disposed: the turn ends `aborted` and the
call does not run. `rpc` writes only protocol lines to stdout
(logs and stray prints go to stderr) and exits 0 after `shutdown` or at the end of its input.

## Limits

| what | limit | past it |
|---|---|---|
| one line (`rpc`, `acp`) or WebSocket message (web UI) | {MAX_LINE:,} bytes of UTF-8 (16 MiB) | -32600 once, `id` null; the whole line is skipped and the next one read. On the web UI a frame over uvicorn's own limit (`ws_max_size`, also 16 MiB by default) is refused by the WebSocket layer instead: the socket closes once with 1009 (message too big) |
| nesting of arrays and objects | {MAX_DEPTH} levels (the protocol's own messages need fewer than ten) | -32600 (with the message's id when it can be read), however deep: a 100,000-level line is refused, not a crash |
| an `id` | `null`, an integer within ±{MAX_ID:,} (2^53 - 1, what JavaScript holds exactly) or a string of at most {MAX_ID_CHARS} characters | -32600, `id` null |
| a number anywhere | 4,300 digits (Python's conversion limit) | -32600 |

`acp` applies the same limits before the ACP library sees a line (docs/acp.md).

## Errors

| code | when |
|---|---|
"""  # noqa: E501 (the example lines are whole protocol messages)


def _type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return f"[{name}](#{name.lower()})"
    if "const" in schema:
        return f"`{schema['const']!r}`".replace("'", '"')
    if "enum" in schema:
        return " \\| ".join(f'`"{value}"`' for value in schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(_type(option) for option in schema[key])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"list of {_type(schema.get('items', {}))}"
    if kind == "object" and "additionalProperties" in schema:
        return f"map of {_type(schema['additionalProperties'])}"
    return f"{kind}"


def _definition(name: str, schema: dict[str, Any]) -> list[str]:
    lines = [f"### {name}", ""]
    if schema.get("description"):
        lines += [" ".join(schema["description"].split()), ""]
    properties: dict[str, Any] = schema.get("properties", {})
    if not properties:
        return [*lines, "No fields.", ""]
    required = set(schema.get("required", []))
    lines += ["| field | type | required | default | meaning |", "|---|---|---|---|---|"]
    for field, spec in properties.items():
        default = f"`{json.dumps(spec['default'])}`" if "default" in spec else ""
        need = "yes" if field in required else ""
        meaning = " ".join(str(spec.get("description", "")).split()).replace("|", "\\|")
        lines.append(f"| `{field}` | {_type(spec)} | {need} | {default} | {meaning} |")
    return [*lines, ""]


def reference_text() -> str:
    """The whole reference file."""
    schema = build_schema()
    out = [_INTRO.rstrip("\n")]
    out += [f"| {code} | {when} |" for code, when in _ERRORS]
    out += ["", "## Requests", ""]
    for method, spec in schema["methods"].items():
        out += [
            f"### `{method}`",
            "",
            f"params: {_type(spec['params'])}; result: {_type(spec['result'])}",
            "",
        ]
    out += [
        "## Notification",
        "",
        f"`{UPDATE_METHOD}`: params {_type(schema['notifications'][UPDATE_METHOD]['params'])}",
        "",
        "## Types",
        "",
    ]
    for name, definition in schema["$defs"].items():
        out += _definition(name, definition)
    return "\n".join(out).rstrip("\n") + "\n"
