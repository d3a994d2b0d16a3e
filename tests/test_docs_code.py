"""The Python in the docs runs as written, through the installed package, in a fresh folder.

Every ```python block of the docs below runs as a script in a new interpreter, in a temporary
folder with its own STAR_HARNESS_HOME and no API key. A block that is deliberately a fragment
(it names things defined elsewhere) says so on the line before its fence with
`<!-- doc-test: fragment ... -->`; a fragment must still compile (top-level `await` allowed)
and its imports, if it has any, must run, so a renamed or removed name fails here.
`package=NAME` in the marker resolves the fragment's relative imports (`from .brain import
...`) against NAME.

The framework's own text (src/starharness/npc) never names the sample game.

The MCP server's own tool list is checked against docs/godot-bridge.md: every tool `mcp`
serves is named there, and the number of godot_* tools it states is the number there are.
"""

from __future__ import annotations

import ast
import asyncio
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from starharness.godot import GODOT_TOOLS

DOCS = Path(__file__).resolve().parents[1] / "docs"
CHECKED = ("godot-bridge.md", "writing-a-game.md")
_FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
_MARKER = re.compile(r"<!-- doc-test: fragment\b(?P<rest>[^>]*)-->")
_PACKAGE = re.compile(r"\bpackage=([\w.]+)")
_RUN_S = 120


@dataclass(frozen=True)
class Block:
    doc: str
    line: int
    code: str
    fragment: bool
    package: str | None

    @property
    def name(self) -> str:
        return f"{self.doc}:{self.line}"


def _blocks(doc: str) -> list[Block]:
    text = (DOCS / doc).read_text(encoding="utf-8")
    found: list[Block] = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = _MARKER.search(before)
        package = _PACKAGE.search(marker["rest"]) if marker else None
        line = text.count("\n", 0, match.start()) + 1
        found.append(Block(doc, line, match[1], marker is not None, package and package[1]))
    return found


ALL_BLOCKS = [block for doc in CHECKED for block in _blocks(doc)]


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env["STAR_HARNESS_HOME"] = str(home)
    env.pop("PYTHONPATH", None)
    return env


def _run(script: str, where: Path) -> subprocess.CompletedProcess[str]:
    path = where / "block.py"
    path.write_text(script, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(path)],
        cwd=where,
        env=_env(where / "home"),
        capture_output=True,
        text=True,
        timeout=_RUN_S,
    )


def _imports_of(block: Block) -> str:
    """The fragment's import statements, its relative ones made absolute against the package."""
    tree = ast.parse(block.code)
    imports: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level:
            assert block.package, f"{block.name}: a relative import needs package= in the marker"
            base = block.package.rsplit(".", node.level - 1)[0]
            module = f"{base}.{node.module}" if node.module else base
            node = ast.ImportFrom(module=module, names=node.names, level=0)
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.append(node)
    return ast.unparse(ast.fix_missing_locations(ast.Module(body=imports, type_ignores=[])))


def test_the_docs_have_python_to_check() -> None:
    for doc in CHECKED:
        blocks = [b for b in ALL_BLOCKS if b.doc == doc]
        assert blocks, f"{doc} has no python blocks"
        assert any(not b.fragment for b in blocks), f"{doc}: every block is a fragment"


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=lambda b: b.name)
def test_a_python_block_runs_as_written(block: Block, tmp_path: Path) -> None:
    if block.fragment:
        compile(block.code, block.name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        script = _imports_of(block)
    else:
        script = block.code
    result = _run(script, tmp_path)
    assert result.returncode == 0, f"{block.name}:\n{script}\n{result.stdout}\n{result.stderr}"


async def _served_tools(project: Path, home: Path) -> list[str]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "starharness.cli", "mcp", "--profile", "godot", "--project", str(project)],
        env=_env(home),
        cwd=str(project),
    )
    with (project.parent / "mcp-stderr.log").open("w", encoding="utf-8") as errors:
        async with (
            stdio_client(params, errlog=errors) as (read, write),
            ClientSession(read, write) as session,
        ):
            await asyncio.wait_for(session.initialize(), timeout=60)
            listed = await asyncio.wait_for(session.list_tools(), timeout=60)
    return [tool.name for tool in listed.tools]


async def test_godot_bridge_md_names_every_tool_mcp_serves(tmp_path: Path) -> None:
    project = tmp_path / "game"
    project.mkdir()
    served = await _served_tools(project, tmp_path / "home")
    text = (DOCS / "godot-bridge.md").read_text(encoding="utf-8")
    godot = [name for name in served if name.startswith("godot_")]
    assert len(godot) == len(GODOT_TOOLS) == 27
    assert f"all {len(GODOT_TOOLS)} `godot_*` tools" in text
    missing = [name for name in served if f"`{name}`" not in text]
    assert missing == [], f"served by `mcp` but not named in docs/godot-bridge.md: {missing}"
    assert "ask_user" not in served  # the doc says MCP leaves it out


def test_the_framework_never_names_the_sample_game() -> None:
    # The framework knows no game (docs/npc-framework.md); its docstrings and comments either.
    framework = Path(__file__).resolve().parents[1] / "src" / "starharness" / "npc"
    words = re.compile(r"voyage|omega station|karsk", re.IGNORECASE)
    named = [
        f"{path.relative_to(framework)}:{number}: {line.strip()}"
        for path in sorted(framework.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if words.search(line)
    ]
    assert named == []
