"""The Unity package compiles with Debian's mcs against a UnityEngine stub, and its
MonoBehaviour, driven outside Unity, raises every frame event from a real WebSocket."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
from frame_fakes import FakeHarness, running_fake, up_types
from mono_tools import mono_tool

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "unity"
STUB = Path(__file__).resolve().parent / "unity_stub"
_PROBE_SECONDS = 30


def _compile(*args: str) -> None:
    run = subprocess.run([mono_tool("mcs"), *args], capture_output=True, text=True, check=False)
    assert run.returncode == 0, f"mcs failed:\n{run.stdout}{run.stderr}"


async def _run_probe(*command: str, cwd: Path) -> tuple[int | None, str, str]:
    """The probe's exit code (None when it had to be killed), stdout and stderr.

    A probe that outlives its own deadline is killed, and what it printed so far is kept, so a
    failure shows how far it got rather than only a timeout.
    """
    probe = await asyncio.create_subprocess_exec(
        *command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert probe.stdout is not None and probe.stderr is not None
    reading = asyncio.gather(probe.stdout.read(), probe.stderr.read(), probe.wait())
    try:
        async with asyncio.timeout(_PROBE_SECONDS + 10):
            out, err, returncode = await asyncio.shield(reading)
    except TimeoutError:
        probe.kill()
        out, err, _ = await reading
        note = f"[killed: still running {_PROBE_SECONDS + 10} s after it started]\n"
        return None, out.decode(), note + err.decode()
    return returncode, out.decode(), err.decode()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("unity")
    _compile("-target:library", f"-out:{out / 'UnityEngine.dll'}", str(STUB / "UnityEngine.cs"))
    sources = sorted(str(path) for path in (PACKAGE / "Runtime").glob("*.cs"))
    _compile(
        "-target:library",
        "-warnaserror",
        f"-r:{out / 'UnityEngine.dll'}",
        f"-out:{out / 'StarHarness.Client.dll'}",
        *sources,
    )
    return out


def test_the_package_is_a_upm_package_with_an_assembly_definition() -> None:
    manifest = json.loads((PACKAGE / "package.json").read_text(encoding="utf-8"))
    assert manifest["name"] == "com.starharness.client"
    assert {"version", "displayName", "unity"} <= set(manifest)
    assembly = json.loads((PACKAGE / "Runtime" / "StarHarness.Client.asmdef").read_text())
    assert assembly["name"] == "StarHarness.Client"


def test_the_runtime_compiles_with_mcs_without_warnings(built: Path) -> None:
    assert (built / "StarHarness.Client.dll").stat().st_size > 0


async def test_every_frame_reaches_its_event_through_a_real_websocket(built: Path) -> None:
    mono = mono_tool("mono")
    _compile(
        "-target:exe",
        f"-r:{built / 'UnityEngine.dll'}",
        f"-r:{built / 'StarHarness.Client.dll'}",
        f"-out:{built / 'ClientProbe.exe'}",
        str(STUB / "ClientProbe.cs"),
    )
    # A greeting far larger than the client's 8 KiB receive buffer, full of multi-byte
    # characters, so pieces end mid-character: it must arrive whole and undamaged.
    long_piece = "日本€é" * 5000
    async with running_fake(FakeHarness(greeting=(long_piece, "!"))) as harness:
        returncode, out, err = await _run_probe(
            mono, str(built / "ClientProbe.exe"), harness.url, str(_PROBE_SECONDS), cwd=built
        )

    lines = out.splitlines()
    assert returncode == 0, f"probe failed ({returncode}):\n{out}{err}"
    assert {line.split(" ", 1)[0] for line in lines} == {
        "welcome",
        "encounter.opened",
        "say.delta",
        "say.end",
        "options",
        "action",
        "encounter.idle",
        "error",
        "world.event",
        "hud",
    }
    assert lines[0] == "welcome 1 2 Ada 100"
    assert f"say.delta {len(long_piece)} {long_piece.count('€')}" in lines
    assert "action trade True You buy 1 ore." in lines
    assert "hud p1 60" in lines
    # An offer arrives with its action and cost, and picking it commits it.
    assert "options 2 buy" in lines
    assert "options 2 offer-1 [offer offer-1 player_buys 50 coins]" in lines
    assert "action player_buys True You buy 2 ore for 50." in lines
    assert "hud p1 10" in lines
    assert "error llm_unavailable enc-1" in lines
    assert lines[-1] == "world.event dock 2 days pass"
    assert up_types(harness) == [
        "hello",
        "encounter.open",
        "encounter.say",
        "encounter.say",
        "encounter.say",
        "encounter.say",
        "world.tick",
    ]
    assert harness.received[2] == {"t": "encounter.say", "id": "enc-1", "optionId": "buy"}
    assert harness.received[5] == {"t": "encounter.say", "id": "enc-1", "optionId": "offer-1"}
