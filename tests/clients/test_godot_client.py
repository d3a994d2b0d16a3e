"""The Godot addon parses and lints, and is an installable plugin with its autoload."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from gdtoolkit.parser import parser
from lark import Token

ROOT = Path(__file__).resolve().parents[2]
GODOT = ROOT / "clients" / "godot"
ADDON = GODOT / "addons" / "star_harness_client"
SCRIPTS = sorted(GODOT.rglob("*.gd"))


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    assert found is not None, f"{name} (gdtoolkit) is not installed in the project environment"
    return found


@pytest.mark.parametrize("tool", ["gdparse", "gdlint"])
def test_every_script_parses_and_lints(tool: str) -> None:
    assert len(SCRIPTS) >= 3
    run = subprocess.run(
        [_tool(tool), *map(str, SCRIPTS)], capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, f"{tool} failed:\n{run.stdout}{run.stderr}"


def test_the_plugin_registers_the_autoload_it_ships() -> None:
    config = configparser.ConfigParser()
    config.read(ADDON / "plugin.cfg", encoding="utf-8")
    script = config["plugin"]["script"].strip('"')
    assert (ADDON / script).is_file()
    plugin = (ADDON / script).read_text(encoding="utf-8")
    assert 'AUTOLOAD_NAME := "StarHarness"' in plugin
    assert 'AUTOLOAD_PATH := "res://addons/star_harness_client/star_harness.gd"' in plugin
    assert (ADDON / "star_harness.gd").is_file()


def test_the_autoload_polls_in_process_and_backs_off() -> None:
    source = (ADDON / "star_harness.gd").read_text(encoding="utf-8")
    assert "WebSocketPeer.new()" in source
    assert "func _process(" in source and "_socket.poll()" in source
    assert "_backoff_ms = mini(_backoff_ms * 2, MAX_BACKOFF_MS)" in source
    assert 'const DEFAULT_URL := "ws://127.0.0.1:3099/gh"' in source
    for method in ("open_encounter", "say", "say_option", "close_encounter", "tick"):
        assert f"func {method}(" in source


def _gd_functions(path: Path) -> dict[str, list[str]]:
    """Each function of a script and the tokens of its body (names, strings, operators)."""
    tree = parser.parse(path.read_text(encoding="utf-8"))
    functions: dict[str, list[str]] = {}
    for kind in ("func_def", "static_func_def"):
        for definition in tree.find_data(kind):
            tokens = [str(t) for t in definition.scan_values(lambda v: isinstance(v, Token))]
            name = next(t for t in tokens if t not in {"static", "func"})
            functions[name] = tokens
    return functions


def test_an_offer_reaches_the_game_with_its_action_and_cost() -> None:
    functions = _gd_functions(ADDON / "star_harness.gd")
    source = (ADDON / "star_harness.gd").read_text(encoding="utf-8")
    assert "func offer_of(item: Dictionary) -> Dictionary:" in source
    assert "func is_offer(item: Dictionary) -> bool:" in source
    # Every `options` item goes through the parser that keeps `offer: {action, cost}`.
    assert 'options.emit(id, _option_items(_array(frame, "items")))' in source
    parsed = functions["_option_items"]
    for key in ('"offer"', '"action"', '"cost"', '"id"', '"label"'):
        assert key in parsed, f"_option_items does not read {key}"
    # The example panel shows an offer apart, with its cost and Accept.
    example = (GODOT / "examples" / "dialogue_panel.gd").read_text(encoding="utf-8")
    assert "StarHarness.offer_of(item)" in example
    assert '"cost"' in example and "Accept" in example
