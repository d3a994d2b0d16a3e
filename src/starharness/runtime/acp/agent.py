"""The session API as an ACP agent (the Agent Client Protocol that editors such as Zed speak).

Like dsh's ACP bridge, it reports only committed final text: each turn's final assistant text
is sent once as an agent message when the turn ends; deltas, reasoning and tool calls are not.
Approval questions become ACP permission requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, update_agent_message_text, update_user_message_text
from acp.interfaces import Client
from acp.schema import (
    AcpMcpServer,
    AgentCapabilities,
    AllowedOutcome,
    AudioContentBlock,
    AuthenticateResponse,
    AuthEnvVar,
    AuthMethodAgent,
    ClientCapabilities,
    CloseSessionResponse,
    EmbeddedResourceContentBlock,
    EnvVarAuthMethod,
    ForkSessionResponse,
    HttpMcpServer,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpServerStdio,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ResourceContentBlock,
    ResumeSessionResponse,
    SessionInfo,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    SseMcpServer,
    StopReason,
    TerminalAuthMethod,
    TextContentBlock,
    ToolCallUpdate,
)

from ..protocol import (
    MODEL_UNAVAILABLE,
    AnswerApproval,
    ApprovalAnswer,
    ApprovalAsked,
    CancelTurn,
    CloseSession,
    CreateSession,
    HostInfo,
    InitializeParams,
    InitializeResult,
    ListSessions,
    ModelInfo,
    PromptParams,
    PromptResult,
    ResumeSession,
    RpcError,
    SessionHost,
    SessionList,
    SessionOpened,
)
from ..protocol.models import WireModel

_log = logging.getLogger("starharness.runtime.acp")

McpServers = list[HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio]
PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)

_STOP_REASONS: dict[str, StopReason] = {
    "completed": "end_turn",
    "aborted": "cancelled",
    "interrupted": "cancelled",
    "max-tokens": "max_tokens",
}
_OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]
_ANSWERS: dict[str, ApprovalAnswer] = {
    "allow_once": "allow_once",
    "reject": "reject",
}


def _auth_methods(
    model: ModelInfo | None,
) -> list[EnvVarAuthMethod | TerminalAuthMethod | AuthMethodAgent]:
    """Nothing to authenticate with a usable model; without one, how to provide it."""
    if model is None or model.ready:
        return []
    problem = model.problem or "no model is configured"
    if model.variable is not None:
        return [
            EnvVarAuthMethod(
                type="env_var",
                id=f"env:{model.variable}",
                name=f"Set {model.variable}",
                description=problem,
                vars=[AuthEnvVar(name=model.variable, label=f"API key ({model.variable})")],
            )
        ]
    return [AuthMethodAgent(id="configure-model", name="Configure a model", description=problem)]


def _iso(epoch_ms: int) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat()


class AcpAgent:
    """One ACP connection: sessions through a SessionHost, approvals as permission requests."""

    def __init__(self, host_factory: Any, info: HostInfo) -> None:
        self._info = info
        self._host: SessionHost = host_factory(self._on_update)
        self._client: Client | None = None
        self._asks: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        started = await self._call("initialize", InitializeParams())
        assert isinstance(started, InitializeResult)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(load_session=True),
            agent_info=Implementation(name=self._info.name, version=self._info.version or "0"),
            auth_methods=_auth_methods(started.model),
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: McpServers | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        opened = await self._call("session", CreateSession())
        assert isinstance(opened, SessionOpened)
        return NewSessionResponse(session_id=opened.session_id)

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: McpServers | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        opened = await self._call("session", ResumeSession(session_id=session_id))
        assert isinstance(opened, SessionOpened)
        client = self._client
        if client is not None:
            # ACP replays a loaded session's conversation as updates before answering.
            for item in opened.history:
                if item.role == "user":
                    await client.session_update(session_id, update_user_message_text(item.text))
                elif item.role == "assistant":
                    await client.session_update(session_id, update_agent_message_text(item.text))
        return LoadSessionResponse()

    async def prompt(
        self, session_id: str, prompt: list[PromptBlock], **kwargs: Any
    ) -> PromptResponse:
        text = "\n".join(block.text for block in prompt if isinstance(block, TextContentBlock))
        if not text.strip():
            raise RequestError.invalid_params({"prompt": "no text in the prompt"})
        result = await self._call("prompt", PromptParams(session_id=session_id, text=text))
        assert isinstance(result, PromptResult)
        if result.reason == "error":
            raise RequestError.internal_error({"turn": result.turn, "error": result.error})
        client = self._client
        if result.text and client is not None:
            await client.session_update(session_id, update_agent_message_text(result.text))
        return PromptResponse(stop_reason=_STOP_REASONS.get(result.reason, "end_turn"))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        # A cancel for an unknown or idle session is a no-op in ACP.
        with contextlib.suppress(RequestError):
            await self._call("session", CancelTurn(session_id=session_id))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        listed = await self._call("session", ListSessions())
        assert isinstance(listed, SessionList)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=s.session_id,
                    cwd=cwd or str(Path.cwd()),
                    title=s.title or None,
                    updated_at=_iso(s.updated_at),
                )
                for s in listed.sessions
            ]
        )

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: McpServers | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        await self._call("session", ResumeSession(session_id=session_id))
        return ResumeSessionResponse()

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        await self._call("session", CloseSession(session_id=session_id))
        return CloseSessionResponse()

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: McpServers | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        raise RequestError.method_not_found("session/fork")

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse | None:
        raise RequestError.method_not_found("session/set_mode")

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse | None:
        raise RequestError.method_not_found("session/set_config_option")

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        return None  # nothing to authenticate: the profile's own credentials are used

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    # -- the session API underneath ----------------------------------------------------------

    async def _call(self, method: str, params: WireModel) -> Any:
        try:
            return await self._host.call_model(method, params)
        except RpcError as error:
            if error.code == MODEL_UNAVAILABLE:
                # ACP's own word for it: the client may offer the user the authMethods.
                required = RequestError.auth_required()
                raise RequestError(required.code, error.message, error.data) from None
            raise RequestError(error.code, error.message, error.data) from None

    def _on_update(self, update: WireModel) -> None:
        if isinstance(update, ApprovalAsked):
            task = asyncio.get_running_loop().create_task(self._ask(update))
            self._asks.add(task)
            task.add_done_callback(self._asks.discard)

    async def _ask(self, asked: ApprovalAsked) -> None:
        answer: ApprovalAnswer = "reject"
        client = self._client
        if client is not None:
            tool_call = ToolCallUpdate(
                tool_call_id=asked.call_id,
                title=f"{asked.tool} {asked.arguments}",
                status="pending",
                raw_input=asked.arguments,
            )
            try:
                response = await client.request_permission(asked.session_id, tool_call, _OPTIONS)
            except Exception:
                _log.exception("permission request for %s failed", asked.tool)
            else:
                outcome = response.outcome
                if isinstance(outcome, AllowedOutcome):
                    answer = _ANSWERS.get(outcome.option_id, "reject")
        params = AnswerApproval(session_id=asked.session_id, call_id=asked.call_id, answer=answer)
        try:
            await self._host.call_model("session", params)
        except RpcError as error:
            _log.warning("answering %s: %s", asked.tool, error.message)

    async def aclose(self) -> None:
        for task in list(self._asks):
            task.cancel()
        await asyncio.gather(*self._asks, return_exceptions=True)
        await self._host.aclose()
