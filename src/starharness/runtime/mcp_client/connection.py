"""One external MCP server: a task that owns its transport and session while it runs.

The MCP SDK's transports are anyio context managers that must be left by the task that entered
them, so one owner task enters them, reports the tool list, and waits to be told to stop. A
server that went away gets a new owner task (a restart) on the next call of its tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from dataclasses import dataclass
from typing import Any, Literal, cast

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, CallToolResult, PaginatedRequestParams, Tool

from ..errors import UserFacingError
from .config import McpServerConfig

_log = logging.getLogger("starharness.runtime.mcp_client")

State = Literal["starting", "ready", "failed", "stopped"]


class McpUnavailableError(UserFacingError):
    """The server is not running (it failed to start, or it went away)."""


@dataclass(frozen=True, slots=True)
class Restarts:
    """How a server that went away is brought back: by the next call, at most `attempts` failed
    tries in a row, waiting `backoff_s` (doubled each time) after a failed one."""

    attempts: int = 3
    backoff_s: float = 1.0
    start_timeout_s: float = 30.0


class ServerConnection:
    """Starts, calls, restarts and stops one MCP server; `state` and `problem` say how it is."""

    def __init__(self, config: McpServerConfig, restarts: Restarts | None = None) -> None:
        self.config = config
        self.name = config.name
        self.restarts = restarts or Restarts()
        self.state: State = "starting"
        self.problem = ""
        self.failed_restarts = 0
        """Failed restart attempts since the server last ran (reset when one succeeds)."""
        self._session: ClientSession | None = None
        self._stop = asyncio.Event()
        self._owner: asyncio.Task[None] | None = None
        self._retry_at = 0.0
        self._reviving = asyncio.Lock()

    @property
    def target(self) -> str:
        return " ".join(self.config.command) if self.config.command else str(self.config.url)

    async def start(self, timeout_s: float) -> list[Tool]:
        """Connect and list the tools; raises McpUnavailableError naming what went wrong."""
        ready: asyncio.Future[list[Tool]] = asyncio.get_running_loop().create_future()
        self.state = "starting"
        self._stop = stop = asyncio.Event()
        self._owner = asyncio.create_task(self._own(ready, stop), name=f"mcp-client:{self.name}")
        try:
            return await asyncio.wait_for(asyncio.shield(ready), timeout_s)
        except TimeoutError:
            self._fail(f"it did not answer within {timeout_s:g} s")
            await self._halt()
            raise McpUnavailableError(self._describe()) from None
        except McpUnavailableError:
            await self._halt()
            raise

    async def _own(self, ready: asyncio.Future[list[Tool]], stop: asyncio.Event) -> None:
        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                tools = await _list_tools(session)
                self._session = session
                self.state = "ready"
                if not ready.done():
                    ready.set_result(tools)
                await stop.wait()
        except asyncio.CancelledError:
            raise
        except BaseException as error:  # an ExceptionGroup from the transport's task group
            self._fail(_first_message(error))
            _log.warning("MCP server %r: %s", self.name, self.problem)
        finally:
            self._session = None
            if self.state in ("starting", "ready"):
                self.state = "stopped"
            if not ready.done():
                ready.set_exception(McpUnavailableError(self._describe()))

    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        config = self.config
        if config.command is not None:
            params = StdioServerParameters(
                command=config.command[0],
                args=config.command[1:],
                env=config.env or None,
                cwd=config.cwd,
            )
            return stdio_client(params, errlog=sys.stderr)
        assert config.url is not None
        return streamable_http_client(config.url)

    def _fail(self, problem: str) -> None:
        self.state = "failed"
        self.problem = problem

    def _describe(self) -> str:
        problem = f": {self.problem}" if self.problem else ""
        return f"MCP server {self.name!r} ({self.target}) is not running{problem}"

    def _live(self) -> ClientSession | None:
        owner = self._owner
        if self.state != "ready" or owner is None or owner.done():
            return None
        return self._session

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call one of the server's tools, restarting a server that went away first;
        McpUnavailableError when it is down (or goes away during the call)."""
        session = self._live() or await self._revive()
        try:
            return await session.call_tool(tool, arguments)
        except asyncio.CancelledError:
            raise
        except MCPError as error:
            if error.error.code != CONNECTION_CLOSED:
                # The server answered with an error: it lives, only this call failed.
                raise McpUnavailableError(
                    f"MCP server {self.name!r} ({self.target}) failed the call: "
                    f"{_first_message(error)}"
                ) from None
            problem = "the connection closed"
        except Exception as error:  # the transport died under the call
            problem = _first_message(error)
        if self.state == "failed" and self.problem:
            problem = self.problem  # the owner saw the transport's own error: more telling
        self._fail(problem)
        await self._halt()
        _log.warning("MCP server %r went away: %s; the next call restarts it", self.name, problem)
        raise McpUnavailableError(
            f"MCP server {self.name!r} ({self.target}) went away during the call ({problem}); "
            "the next call of its tools restarts it"
        ) from None

    async def _revive(self) -> ClientSession:
        """Restart (stdio) or reconnect (HTTP) the server, within the restart policy."""
        async with self._reviving:  # concurrent calls wait for one attempt, not start many
            session = self._live()
            if session is not None:
                return session
            policy = self.restarts
            if self.failed_restarts >= policy.attempts:
                raise McpUnavailableError(
                    f"{self._describe()}; gave up after {self.failed_restarts} failed restart "
                    "attempts"
                )
            wait = self._retry_at - time.monotonic()
            if wait > 0:
                raise McpUnavailableError(
                    f"{self._describe()}; the next restart attempt is in {wait:.1f} s"
                )
            attempt = self.failed_restarts + 1
            verb = "restarting" if self.config.command is not None else "reconnecting to"
            _log.warning(
                "MCP server %r is down (%s): %s it (attempt %d of %d)",
                self.name,
                self.problem or self.state,
                verb,
                attempt,
                policy.attempts,
            )
            await self._halt()
            try:
                await self.start(policy.start_timeout_s)
            except McpUnavailableError as error:
                self.failed_restarts = attempt
                backoff = policy.backoff_s * 2 ** (attempt - 1)
                self._retry_at = time.monotonic() + backoff
                more = (
                    f"the next attempt in {backoff:g} s"
                    if attempt < policy.attempts
                    else "no more attempts"
                )
                _log.warning(
                    "MCP server %r: restart attempt %d of %d failed: %s; %s",
                    self.name,
                    attempt,
                    policy.attempts,
                    self.problem,
                    more,
                )
                raise McpUnavailableError(
                    f"{error}; restart attempt {attempt} of {policy.attempts} failed, {more}"
                ) from None
            self.failed_restarts = 0
            self._retry_at = 0.0
            _log.warning("MCP server %r is back (attempt %d)", self.name, attempt)
            session = self._live()
            if session is None:  # it died again at once
                raise McpUnavailableError(self._describe())
            return session

    async def _halt(self) -> None:
        """Stop the current incarnation's owner task (a stdio server ends with its stdin)."""
        self._stop.set()
        owner = self._owner
        if owner is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(owner), 10.0)
        except TimeoutError:
            owner.cancel()
        await asyncio.gather(owner, return_exceptions=True)

    async def aclose(self) -> None:
        """Stop the server for good."""
        await self._halt()
        if self.state == "ready":
            self.state = "stopped"


async def _list_tools(session: ClientSession) -> list[Tool]:
    tools: list[Tool] = []
    cursor: str | None = None
    while True:
        params = None if cursor is None else PaginatedRequestParams(cursor=cursor)
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def _first_message(error: BaseException) -> str:
    """The innermost useful message of an error (transports raise exception groups)."""
    inner: BaseException = error
    while True:
        nested = cast(tuple[BaseException, ...], getattr(inner, "exceptions", ()))
        if not nested:
            break
        inner = nested[0]
    text = str(inner)
    name = type(inner).__name__
    return f"{name}: {text}" if text else name
