"""The session host answers any params of any method with a result or a clear JSON-RPC error."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stack_support import start_runtime
from starharness.runtime.approvals import APPROVALS
from starharness.runtime.kernel import Context
from starharness.runtime.protocol import ApprovalRouter, HostInfo, RpcError, SessionHost
from starharness.runtime.protocol import jsonrpc as codes

CLEAR = {
    codes.INVALID_PARAMS,
    codes.METHOD_NOT_FOUND,
    codes.SESSION_NOT_FOUND,
    codes.SESSION_EXISTS,
    codes.SESSION_BUSY,
    codes.NO_SUCH_APPROVAL,
    codes.NOT_INITIALIZED,
}


async def _runtime() -> Context:
    # The model is never reached: these tests only ask the host, whose answers need no model.
    return await start_runtime("http://127.0.0.1:9/v1")


@pytest.fixture(scope="module")
def host() -> Iterator[tuple[asyncio.AbstractEventLoop, SessionHost]]:
    loop = asyncio.new_event_loop()
    ctx = loop.run_until_complete(_runtime())
    sent: list[Any] = []
    session_host = SessionHost(
        ctx, ApprovalRouter(ctx.maybe(APPROVALS)), HostInfo(profile="test"), sent.append
    )
    loop.run_until_complete(session_host.call("initialize", {}))
    yield loop, session_host
    loop.run_until_complete(session_host.aclose())
    loop.run_until_complete(ctx.dispose())
    loop.close()


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=6), inner, max_size=2)
    ),
    max_leaves=6,
)
_keys = st.sampled_from(["action", "sessionId", "callId", "answer", "text", "limit", "x"])
_actions = st.sampled_from(["create", "resume", "list", "answer", "cancel", "close", "bogus"])


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    method=st.sampled_from(["session", "prompt", "initialize", "shutdown-not", "steer"]),
    params=st.dictionaries(_keys, _values, max_size=4),
    action=_actions,
)
def test_any_params_get_a_result_or_a_clear_error(
    host: tuple[asyncio.AbstractEventLoop, SessionHost],
    method: str,
    params: dict[str, Any],
    action: str,
) -> None:
    loop, session_host = host
    if method == "session" and "action" not in params:
        params = {**params, "action": action}
    if method == "prompt" and isinstance(params.get("text"), str) and params["text"]:
        params = {**params, "sessionId": "never-opened"}  # a real turn would need a model
    try:
        loop.run_until_complete(session_host.call(method, params))
    except RpcError as error:
        assert error.code in CLEAR, (error.code, error.message)
        assert error.message
