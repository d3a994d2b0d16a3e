"""The GDScript addon: it parses, lints, and handles exactly the bridge's allow-list."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gdtoolkit.parser import parser
from lark import Token, Tree

from starharness.godot import ALLOWED_METHODS
from starharness.godot.protocol import DENIED_PREFIXES

ADDON = Path(__file__).resolve().parents[2] / "addons" / "agent_rpc"
SCRIPTS = sorted(ADDON.rglob("*.gd"))


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    assert found is not None, f"{name} (gdtoolkit) is not installed in the project environment"
    return found


def _tree(path: Path) -> Tree[Token]:
    return parser.parse(path.read_text(encoding="utf-8"))


def _function_names(path: Path) -> list[str]:
    return [str(header.children[0]) for header in _tree(path).find_data("func_header")]


def _string_constant(path: Path, name: str) -> list[str]:
    for statement in _tree(path).find_data("const_stmt"):
        declaration = statement.children[0]
        if isinstance(declaration, Tree) and str(declaration.children[0]) == name:
            return [
                str(token)[1:-1]
                for token in statement.scan_values(lambda v: isinstance(v, Token))
                if str(token).startswith('"')
            ]
    raise AssertionError(f"{name} is not defined in {path.name}")


def test_the_addon_has_its_files() -> None:
    names = {path.relative_to(ADDON).as_posix() for path in ADDON.rglob("*") if path.is_file()}
    assert {"plugin.cfg", "plugin.gd", "rpc_debugger.gd"} <= names


@pytest.mark.parametrize("tool", ["gdparse", "gdlint"])
def test_every_script_parses_and_lints(tool: str) -> None:
    assert len(SCRIPTS) >= 10
    run = subprocess.run(
        [_tool(tool), *map(str, SCRIPTS)], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, f"{tool} failed:\n{run.stdout}{run.stderr}"


def test_the_addon_allow_list_is_the_bridge_allow_list() -> None:
    listed = _string_constant(ADDON / "rpc_protocol.gd", "ALLOWED_METHODS")

    assert len(listed) == len(set(listed)) == 28
    assert set(listed) == ALLOWED_METHODS


def test_every_allowed_method_has_exactly_one_handler() -> None:
    handlers: dict[str, list[str]] = {}
    for script in SCRIPTS:
        for name in _function_names(script):
            if name.startswith("rpc_"):
                handlers.setdefault(name.removeprefix("rpc_"), []).append(script.name)

    assert set(handlers) == ALLOWED_METHODS, "handlers and allow-list differ"
    assert {method: files for method, files in handlers.items() if len(files) > 1} == {}


def test_the_addon_denies_the_same_settings() -> None:
    assert tuple(_string_constant(ADDON / "rpc_protocol.gd", "DENIED_PREFIXES")) == (
        DENIED_PREFIXES
    )


def test_the_addon_finds_the_bridge_endpoint_with_no_configuration() -> None:
    source = (ADDON / "rpc_endpoint.gd").read_text(encoding="utf-8")
    for needle in (
        '"AGENT_RPC_ENDPOINT"',
        '"agent_rpc/endpoint_file"',
        '"STAR_HARNESS_HOME"',
        '".star-harness"',
        'path_join("godot").path_join("endpoint.json")',
    ):
        assert needle in source
    order = [source.index(name) for name in ("ENV_VAR)", "SETTING)", "default_path()\n")]
    assert order == sorted(order), "discovery order must be env, project setting, default"


def test_the_plugin_manifest_matches_the_addon_version() -> None:
    manifest = configparser.ConfigParser()
    manifest.read(ADDON / "plugin.cfg", encoding="utf-8")
    version = _string_constant(ADDON / "rpc_protocol.gd", "ADDON_VERSION")

    assert manifest["plugin"]["script"] == '"plugin.gd"'
    assert manifest["plugin"]["version"] == f'"{version[0]}"'


def test_requests_are_told_from_events_by_method() -> None:
    source = (ADDON / "plugin.gd").read_text(encoding="utf-8")
    assert 'if not message.has("method"):' in source
    assert 'has("type")' not in source
