"""A small MCP server for the bridge tests: two tools, over stdio or streamable HTTP.

    python tiny_mcp_server.py stdio
    python tiny_mcp_server.py http PORT

With TINY_MCP_PID_FILE set, it writes its process id there (so a test can kill it).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("tiny")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper()


def main(argv: list[str]) -> None:
    pid_file = os.environ.get("TINY_MCP_PID_FILE")
    if pid_file:
        Path(pid_file).write_text(str(os.getpid()), encoding="utf-8")
    if argv[0] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(argv[1]))


if __name__ == "__main__":
    main(sys.argv[1:])
