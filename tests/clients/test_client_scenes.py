"""Every engine client handles scenes: the frames that carry `speakerId` in the schema carry it
in each client's types, and each client can open a scene and speak to one of its NPCs. The
Unity package is compiled with mcs and run under mono on real frame text."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from mono_tools import mono_tool

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "frames.schema.json").read_text(encoding="utf-8"))
UNITY = ROOT / "clients" / "unity" / "Runtime"
UNITY_STUB = Path(__file__).resolve().parent / "unity_stub" / "UnityEngine.cs"
UNREAL = ROOT / "clients" / "unreal" / "Source" / "StarHarnessClient"
GODOT = ROOT / "clients" / "godot"

SPEAKING = sorted(
    name
    for name, definition in SCHEMA["$defs"].items()
    if "speakerId" in definition.get("properties", {})
)
_UNITY_CLASS = {"ActionFrame": "ActionFrame"}
_UNREAL_STRUCT = {"ActionFrame": "FStarHarnessAction"}


def test_the_schema_names_the_speaker_of_every_frame_that_speaks() -> None:
    assert SPEAKING == ["ActionFrame", "EncounterOpened", "Options", "SayDelta", "SayEnd"]
    opened = SCHEMA["$defs"]["EncounterOpened"]["properties"]
    assert opened["npcs"]["items"] == {"$ref": "#/$defs/SceneNpc"}
    assert "npcIds" in SCHEMA["$defs"]["EncounterOpen"]["properties"]
    assert "to" in SCHEMA["$defs"]["EncounterSay"]["properties"]


def _block(source: str, opening: str) -> str:
    start = source.index(opening)
    return source[start : source.index("}", start)]


@pytest.mark.parametrize("definition", SPEAKING)
def test_unity_and_unreal_types_carry_the_speaker(definition: str) -> None:
    unity = (UNITY / "Frames.cs").read_text(encoding="utf-8")
    unity_class = _UNITY_CLASS.get(definition, f"{definition}Frame")
    assert "public string SpeakerId;" in _block(unity, f"public sealed class {unity_class}\n")
    unreal = (UNREAL / "Public" / "StarHarnessFrames.h").read_text(encoding="utf-8")
    struct = _UNREAL_STRUCT.get(definition, f"FStarHarness{definition}")
    assert "FString SpeakerId;" in _block(unreal, f"struct {struct}\n")


def test_unreal_opens_scenes_and_speaks_to_one_npc() -> None:
    header = (UNREAL / "Public" / "StarHarnessClientComponent.h").read_text(encoding="utf-8")
    source = (UNREAL / "Private" / "StarHarnessClientComponent.cpp").read_text(encoding="utf-8")
    assert "FString OpenScene(const TArray<FString>& NpcIds);" in header
    assert "void SayTo(const FString& EncounterId, const FString& NpcId, const FString& Text);" in (
        header
    )
    open_scene = source[source.index("::OpenScene(") : source.index("::SayTo(")]
    assert 'SetArrayField(TEXT("npcIds")' in open_scene
    assert 'SetStringField(TEXT("to"), NpcId)' in source
    frames = (UNREAL / "Public" / "StarHarnessFrames.h").read_text(encoding="utf-8")
    assert "TArray<FStarHarnessSceneNpc> Npcs;" in _block(
        frames, "struct FStarHarnessEncounterOpened"
    )
    # A shared scene (revision 3): the welcome's revision (1 when absent) decides the join;
    # another player's line carries their name.
    assert "int32 Revision = 1;" in _block(frames, "struct FStarHarnessWelcome")
    assert "FString SpeakerName;" in _block(frames, "struct FStarHarnessSayDelta")
    assert "if (Revision >= SharedScenesRevision)" in open_scene
    assert 'SetBoolField(TEXT("join"), true)' in open_scene
    assert "Revision = Frame.Revision;" in source


def test_godot_names_the_speaker_and_opens_scenes() -> None:
    client = (GODOT / "addons" / "star_harness_client" / "star_harness.gd").read_text("utf-8")
    assert "signal speaker(id: String, speaker_id: String, speaker_name: String)" in client
    assert "signal scene_opened(id: String, npcs: Array)" in client
    assert "func open_scene(npc_ids: Array, join := false) -> String:" in client
    assert 'frame["join"] = true' in client
    assert 'revision = int(frame.get("revision", 1))' in client
    assert '"to": npc_id' in client
    # Every frame passes the speaker check before its own signal, so the name comes first.
    dispatch = client[client.index("func _dispatch(") :]
    assert dispatch.index("_note_speaker(id, frame)") < dispatch.index("match ")
    # The signals a one-NPC game connects to keep their arguments.
    assert "signal say_delta(id: String, text: String)" in client
    example = (GODOT / "examples" / "dialogue_panel.gd").read_text("utf-8")
    assert "StarHarness.speaker.connect(" in example and "StarHarness.say_to(" in example
    # A shared scene (revision 3): the example joins, and another player's line (its
    # `speakerName`) is named as theirs and drawn apart from the NPCs'.
    note = client[client.index("func _note_speaker(") :]
    assert 'frame.get("speakerName", "")' in note and "_players[speaker_id]" in note
    assert "func is_other_player(speaker_id: String) -> bool:" in client
    assert "StarHarness.revision >= StarHarness.SHARED_SCENES_REVISION" in example
    assert "StarHarness.open_scene(npc_ids, join)" in example
    on_speaker = example[example.index("func _on_speaker(") : example.index("func _on_say_delta(")]
    assert "StarHarness.is_other_player(speaker_id)" in on_speaker and "(player)" in on_speaker


def _run(*command: str, cwd: Path) -> str:
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, check=False, timeout=120
    )
    assert done.returncode == 0, f"{command[0]} failed:\n{done.stdout}{done.stderr}"
    return done.stdout


def test_unity_reads_scene_frames_and_writes_scene_opens(tmp_path: Path) -> None:
    mcs, mono = mono_tool("mcs"), mono_tool("mono")
    _run(mcs, "-target:library", "-out:UnityEngine.dll", str(UNITY_STUB), cwd=tmp_path)
    sources = sorted(str(path) for path in UNITY.glob("*.cs"))
    _run(mcs, "-target:library", "-r:UnityEngine.dll", "-out:Client.dll", *sources, cwd=tmp_path)
    probe = str(UNITY_STUB.parent / "SceneProbe.cs")
    _run(mcs, "-r:Client.dll", "-r:UnityEngine.dll", "-out:Probe.exe", probe, cwd=tmp_path)
    lines = _run(mono, "Probe.exe", cwd=tmp_path).splitlines()
    assert json.loads(lines[0]) == {
        "t": "encounter.open",
        "id": "s1",
        "npcId": "a",
        "npcIds": ["a", "b"],
        "playerId": "p1",
    }
    assert json.loads(lines[1]) == {"t": "encounter.say", "id": "s1", "text": "hi", "to": "b"}
    assert lines[2:5] == ["a 2 Bo -2", "bbab", "True True"]
    assert json.loads(lines[5]) == {
        "t": "encounter.open",
        "id": "s2",
        "npcId": "a",
        "npcIds": ["a", "b"],
        "playerId": "p1",
        "join": True,
    }
    # A welcome without revision is revision 1; another player's line carries their name.
    assert lines[6] == "1 3 p2 Captain Ash True"
    # Who is in a shared scene: each player's id and name.
    assert lines[7:] == ["s2 2 p2 Captain Birch"]
    client = (UNITY / "StarHarnessClient.cs").read_text(encoding="utf-8")
    assert "Revision >= SharedScenesRevision" in client
    assert re.search(r"public string OpenScene\(", (UNITY / "StarHarnessClient.cs").read_text())
