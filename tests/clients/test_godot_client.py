"""The Godot addon parses and lints, and is an installable plugin with its autoload."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
