"""The MCP client bridge's configuration: which external MCP servers to reach, and how."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, model_validator

_SERVER_NAME = re.compile(r"[A-Za-z0-9-]{1,24}")


class McpServerConfig(BaseModel):
    """One external MCP server: a stdio `command` to start, or a streamable HTTP `url`."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """Tools register as `mcp_<name>_<tool>`: letters, digits and '-', at most 24."""
    command: list[str] | None = None
    """argv of a server speaking MCP on stdin/stdout, started for the life of the process."""
    env: dict[str, str] = {}
    """Extra environment for `command` (values are literal; keep secrets out of profiles)."""
    cwd: str | None = None
    url: str | None = None
    """A streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp."""
    enabled: bool = True
    ask: bool = True
    """Tag every tool requires-approval, so the approval policy is asked before each call."""
    tools: list[str] | None = None
    """Only these tool names (the server's names); None: every tool the server lists. Listed
    tools of a server that fails to start still register, answering every call with why."""

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if not _SERVER_NAME.fullmatch(self.name):
            raise ValueError(
                f"MCP server name {self.name!r}: use 1-24 letters, digits or '-' (it is part of "
                "tool names)"
            )
        if (self.command is None) == (self.url is None):
            raise ValueError(f"MCP server {self.name!r}: give exactly one of command or url")
        if self.command is not None and not self.command:
            raise ValueError(f"MCP server {self.name!r}: command is empty")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"MCP server {self.name!r}: url must be http:// or https://")
        return self


class McpClientConfig(BaseModel):
    """Off by default: nothing starts unless `enabled` is true and a server is listed."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    servers: list[McpServerConfig] = []
    start_timeout_s: float = Field(default=30.0, gt=0)
    call_timeout_s: float = Field(default=120.0, gt=0)
    restart_attempts: int = Field(default=3, ge=0)
    """A server that went away is restarted (HTTP: reconnected) by the next call of one of its
    tools; after this many failed attempts in a row its tools stay down."""
    restart_backoff_s: float = Field(default=1.0, ge=0)
    """The wait after a failed restart attempt before the next, doubled after each failure."""

    @model_validator(mode="after")
    def _unique_names(self) -> McpClientConfig:
        names = [server.name for server in self.servers]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"MCP server names must be unique: {', '.join(twice)}")
        return self
