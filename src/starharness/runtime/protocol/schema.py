"""The session protocol's JSON Schema, generated from the models.

The file is docs/session-protocol.schema.json.

Run `python -m starharness.runtime.protocol.schema_gen OUT` to write it; a test keeps the checked-in
file a fresh generation.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

from .models import METHODS, PROTOCOL_VERSION, UPDATE_ADAPTER, UPDATE_METHOD


def build_schema() -> dict[str, Any]:
    """Every request's params and result, and the update notification, with shared $defs."""
    inputs: list[tuple[str, Any, TypeAdapter[Any]]] = []
    for method, (params, result) in METHODS.items():
        params_adapter = params if isinstance(params, TypeAdapter) else TypeAdapter(params)
        inputs.append((f"{method}.params", "validation", params_adapter))
        inputs.append((f"{method}.result", "serialization", TypeAdapter(result)))
    inputs.append((UPDATE_METHOD, "serialization", UPDATE_ADAPTER))
    refs, definitions = TypeAdapter.json_schemas(
        [(key, mode, adapter) for key, mode, adapter in inputs], by_alias=True
    )
    by_key = {key: refs[(key, mode)] for key, mode, _ in inputs}
    methods = {
        method: {"params": by_key[f"{method}.params"], "result": by_key[f"{method}.result"]}
        for method in METHODS
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "star-harness session protocol",
        "description": (
            "JSON-RPC 2.0, one message per line (stdio) or per WebSocket text message. "
            f"Requests: {', '.join(METHODS)}. The server streams `{UPDATE_METHOD}` notifications."
        ),
        "protocolVersion": PROTOCOL_VERSION,
        "methods": methods,
        "notifications": {UPDATE_METHOD: {"params": by_key[UPDATE_METHOD]}},
        "$defs": definitions.get("$defs", {}),
    }


def schema_text() -> str:
    """The schema file's exact text: stable key order, two-space indent, final newline."""
    return json.dumps(build_schema(), indent=2, ensure_ascii=False) + "\n"
