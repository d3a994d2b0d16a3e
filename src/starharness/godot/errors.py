"""Every failure the bridge and the tools report: a closed set of codes, each with its fix."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from ..runtime.errors import StarHarnessError


class GodotErrorCode(StrEnum):
    """Why a Godot call or the bridge failed; each one is in the troubleshooting table."""

    NO_EDITOR = "no_editor"
    NO_EDITOR_FOR_PROJECT = "no_editor_for_project"
    CLIENT_NOT_FOUND = "client_not_found"
    CLIENT_OTHER_PROJECT = "client_other_project"
    UNKNOWN_TOOL = "unknown_tool"
    TOOL_DISABLED = "tool_disabled"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    INVALID_PARAMS = "invalid_params"
    TIMEOUT = "timeout"
    DISCONNECTED = "disconnected"
    BRIDGE_STOPPED = "bridge_stopped"
    BRIDGE_NOT_RUNNING = "bridge_not_running"
    EDITOR_ERROR = "editor_error"
    RESPONSE_TOO_LARGE = "response_too_large"
    SEND_FAILED = "send_failed"
    BRIDGE_ALREADY_RUNNING = "bridge_already_running"
    PORTS_EXHAUSTED = "ports_exhausted"
    BIND_FAILED = "bind_failed"
    ENDPOINT_WRITE_FAILED = "endpoint_write_failed"


class HandshakeFailure(StrEnum):
    """Why the bridge closed a connection before it became an editor client."""

    MISSING_TOKEN = "missing_token"
    BAD_TOKEN = "bad_token"
    NOT_EDITOR_READY = "not_editor_ready"
    HANDSHAKE_TIMEOUT = "handshake_timeout"
    HANDSHAKE_TOO_LARGE = "handshake_too_large"
    TOO_MANY_UNAUTHENTICATED = "too_many_unauthenticated"


HANDSHAKE_ADVICE: dict[HandshakeFailure, str] = {
    HandshakeFailure.HANDSHAKE_TOO_LARGE: (
        "a connection sent more bytes before its handshake than an editor_ready ever needs: "
        "something other than the Agent RPC addon connected to the bridge port"
    ),
    HandshakeFailure.TOO_MANY_UNAUTHENTICATED: (
        "too many connections were waiting to hand-shake at once, so a new one was closed: "
        "some other program is opening connections to the bridge port"
    ),
    HandshakeFailure.MISSING_TOKEN: (
        "the addon sent no token, so it is older than this bridge: reinstall addons/agent_rpc "
        "from star-harness and restart Godot"
    ),
    HandshakeFailure.BAD_TOKEN: (
        "the addon's token does not match the endpoint file: it read a stale or different file. "
        "Check that AGENT_RPC_ENDPOINT and the agent_rpc/endpoint_file project setting are unset "
        "or point at the bridge's endpoint file, or reinstall the addon and restart Godot"
    ),
    HandshakeFailure.NOT_EDITOR_READY: (
        "the first message was not an editor_ready handshake: something other than the Agent RPC "
        "addon connected to the bridge port, or the addon is broken; reinstall the addon"
    ),
    HandshakeFailure.HANDSHAKE_TIMEOUT: (
        "a connection sent no handshake in time: the editor may be frozen, or another program "
        "connected to the bridge port"
    ),
}


class GodotError(StarHarnessError):
    """A failure with a code from GodotErrorCode; its message says what happened and what to do."""

    def __init__(self, code: GodotErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def no_editor(failures: int, last_failure: HandshakeFailure | None) -> GodotError:
    """No authenticated editor is connected; mention refused handshakes when there were any."""
    message = (
        "no Godot editor connected. Start Godot with your project, enable the Agent RPC addon "
        "(Project > Project Settings > Plugins) and wait for 'Agent RPC: connected' in the "
        "Output panel"
    )
    if failures and last_failure is not None:
        message += (
            f". The bridge refused {failures} connection attempt(s); the last one because "
            f"{HANDSHAKE_ADVICE[last_failure]}"
        )
    return GodotError(GodotErrorCode.NO_EDITOR, message)


def no_editor_for_project(workspace: str, others: Iterable[str]) -> GodotError:
    """Editors are connected, but none has the workspace's project open."""
    listed = ", ".join(others) or "none"
    return GodotError(
        GodotErrorCode.NO_EDITOR_FOR_PROJECT,
        f"no connected Godot editor for project ({workspace}); connected editors: {listed}. "
        "Open this project in Godot with the Agent RPC addon enabled; calls are never sent "
        "to an editor of another project",
    )


def client_not_found(client_id: str, known: Iterable[str]) -> GodotError:
    """An explicit client id that is unknown or not authenticated."""
    listed = ", ".join(known) or "none"
    return GodotError(
        GodotErrorCode.CLIENT_NOT_FOUND,
        f"Godot client {client_id} not found or not authenticated (connected: {listed}); "
        "omit the client id to use the editor of this project",
    )


def client_other_project(client_id: str, project: str, workspace: str) -> GodotError:
    """An explicit client whose project is not the workspace."""
    return GodotError(
        GodotErrorCode.CLIENT_OTHER_PROJECT,
        f"Godot client {client_id} has project {project} open, not this workspace "
        f"({workspace}); calls are never routed to another project. Use an editor that has "
        "this project open",
    )


def unknown_tool(name: str, known: Iterable[str]) -> GodotError:
    """A tool name outside the 27 godot_* tools."""
    return GodotError(
        GodotErrorCode.UNKNOWN_TOOL,
        f"unknown Godot tool {name!r}; the tools are: {', '.join(sorted(known))}",
    )


def tool_disabled(name: str) -> GodotError:
    """The tool (or the method's gating tool) is not in enabled_tools."""
    return GodotError(
        GodotErrorCode.TOOL_DISABLED,
        f"tool {name} is disabled; every godot_* tool is off until it is listed in "
        "enabled_tools of the Godot profile configuration",
    )


def method_not_allowed(method: str) -> GodotError:
    """A wire method outside the allow-list."""
    return GodotError(
        GodotErrorCode.METHOD_NOT_ALLOWED,
        f"method not allowed: {method}; the bridge only sends the 27 editor methods and ping",
    )


def invalid_params(subject: str, details: str) -> GodotError:
    """Parameters that fail validation, hygiene limits or the project-setting rules."""
    return GodotError(
        GodotErrorCode.INVALID_PARAMS,
        f"invalid parameters for {subject}: {details}. Fix the named parameter and call again",
    )


def timeout(method: str, limit_ms: int) -> GodotError:
    """The editor did not answer within the ladder's limit for the method."""
    return GodotError(
        GodotErrorCode.TIMEOUT,
        f"timeout: the Godot editor did not answer {method} within {limit_ms} ms. It may be "
        "busy (importing, a modal dialog, paused at a breakpoint) or frozen; look at the "
        "editor, then retry",
    )


def disconnected(method: str, client_id: str) -> GodotError:
    """The client's connection closed while a call was in flight."""
    return GodotError(
        GodotErrorCode.DISCONNECTED,
        f"Godot editor disconnected (client {client_id}) before answering {method}. It was "
        "closed, crashed or the addon was disabled; reopen it and retry (the addon reconnects "
        "within about a second)",
    )


def bridge_stopped(method: str) -> GodotError:
    """The bridge shut down while a call was in flight."""
    return GodotError(
        GodotErrorCode.BRIDGE_STOPPED,
        f"bridge stopped before the Godot editor answered {method}; start the agent again",
    )


def bridge_not_running() -> GodotError:
    """A call made before start() or after stop()."""
    return GodotError(
        GodotErrorCode.BRIDGE_NOT_RUNNING,
        "the Godot bridge is not running; start it (the godot profile starts it with the "
        "agent) and call again",
    )


def editor_error(method: str, error: str) -> GodotError:
    """The addon answered ok:false; its message is passed on verbatim."""
    return GodotError(GodotErrorCode.EDITOR_ERROR, f"the Godot editor refused {method}: {error}")


def response_too_large(method: str, size: int, limit: int) -> GodotError:
    """An answer line longer than the bridge's maximum line size."""
    return GodotError(
        GodotErrorCode.RESPONSE_TOO_LARGE,
        f"the Godot editor's answer to {method} was {size} bytes, over the {limit}-byte line "
        "limit, and was dropped; narrow the request (a smaller max_depth or limit, a sub-folder)",
    )


def send_failed(method: str, client_id: str, reason: str) -> GodotError:
    """Writing the request to the socket failed."""
    return GodotError(
        GodotErrorCode.SEND_FAILED,
        f"could not send {method} to the Godot editor (client {client_id}): {reason}; it has "
        "probably just disconnected, retry in a second",
    )


def bridge_already_running(pid: int, port: int, endpoint: str) -> GodotError:
    """A live bridge owns the endpoint file; this one refuses to start."""
    return GodotError(
        GodotErrorCode.BRIDGE_ALREADY_RUNNING,
        f"another star-harness Godot bridge is already running (pid {pid}, port {port}, "
        f"endpoint file {endpoint}); stop it first or use another STAR_HARNESS_HOME. Only one "
        "bridge may own an endpoint file",
    )


def ports_exhausted(first: int, last: int) -> GodotError:
    """Every port of the fallback range is taken."""
    return GodotError(
        GodotErrorCode.PORTS_EXHAUSTED,
        f"every port in {first}-{last} on 127.0.0.1 is in use; stop the programs holding them "
        "(another bridge, an old Godot MCP server) and start again",
    )


def bind_failed(port: int, reason: str) -> GodotError:
    """Listening failed for a reason other than 'address in use'."""
    return GodotError(
        GodotErrorCode.BIND_FAILED,
        f"cannot listen on 127.0.0.1:{port}: {reason}; check that the loopback interface is up "
        "and that no firewall or sandbox forbids listening sockets",
    )


def endpoint_write_failed(path: str, reason: str) -> GodotError:
    """The endpoint file could not be written."""
    return GodotError(
        GodotErrorCode.ENDPOINT_WRITE_FAILED,
        f"cannot write the endpoint file {path}: {reason}; make sure its folder is writable by "
        "you (or set STAR_HARNESS_HOME to a folder that is)",
    )
