"""One external MCP server: a task that owns its transport and session for the process's life.

The MCP SDK's transports are anyio context managers that must be left by the task that entered
them, so one owner task enters them, reports the tool list, and waits to be told to stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from typing import Any, Literal, cast

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, PaginatedRequestParams, Tool

from ..errors import UserFacingError
from .config import McpServerConfig

_log = logging.getLogger("starharness.runtime.mcp_client")

State = Literal["starting", "ready", "failed", "stopped"]


class McpUnavailable(UserFacingError):
    """The server is not running (it failed to start, or it went away)."""


class ServerConnection:
    """Starts, calls and stops one MCP server; `state` and `problem` say how it is doing."""

    def __init__(self, config: McpServerConfig) -> None:
        self.config = config
        self.name = config.name
        self.state: State = "starting"
        self.problem = ""
        self._session: ClientSession | None = None
        self._stop = asyncio.Event()
        self._owner: asyncio.Task[None] | None = None

    @property
    def target(self) -> str:
        return " ".join(self.config.command) if self.config.command else str(self.config.url)

    async def start(self, timeout_s: float) -> list[Tool]:
        """Connect and list the tools; raises McpUnavailable naming what went wrong."""
        ready: asyncio.Future[list[Tool]] = asyncio.get_running_loop().create_future()
        self._owner = asyncio.create_task(self._own(ready), name=f"mcp-client:{self.name}")
        try:
            return await asyncio.wait_for(asyncio.shield(ready), timeout_s)
        except TimeoutError:
            self._fail(f"it did not answer within {timeout_s:g} s")
            await self.aclose()
            raise McpUnavailable(self._describe()) from None
        except McpUnavailable:
            await self.aclose()
            raise

    async def _own(self, ready: asyncio.Future[list[Tool]]) -> None:
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
                await self._stop.wait()
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
                ready.set_exception(McpUnavailable(self._describe()))

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

    async def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call one of the server's tools; McpUnavailable when the server is gone."""
        session = self._session
        if session is None or self.state != "ready":
            raise McpUnavailable(self._describe())
        try:
            return await session.call_tool(tool, arguments)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            owner = self._owner
            gone = owner is None or owner.done() or self.state != "ready"
            if not gone:
                # The call failed but the session lives: the transport may just have died
                # under it; the next call will tell. Either way, report the cause.
                raise McpUnavailable(
                    f"MCP server {self.name!r} ({self.target}) failed the call: "
                    f"{_first_message(error)}"
                ) from None
            raise McpUnavailable(self._describe()) from None

    async def aclose(self) -> None:
        """Stop the server (a stdio server's process ends with its stdin)."""
        self._stop.set()
        owner = self._owner
        if owner is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(owner), 10.0)
        except TimeoutError:
            owner.cancel()
        await asyncio.gather(owner, return_exceptions=True)
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
