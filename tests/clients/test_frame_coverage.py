"""Every down frame type in docs/frames.schema.json has a handler in every client."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from gdtoolkit.parser import parser
from lark import Token, Tree

from starharness.npc.client import HANDLER_NAMES, DownFrameHandler, dispatch, handler_name
from starharness.npc.client.terminal import TalkView
from starharness.npc.frames import GENERIC_PROTOCOL

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "docs" / "frames.schema.json"
GODOT_CLIENT = ROOT / "clients/godot/addons/star_harness_client/star_harness.gd"
GODOT_EXAMPLE = ROOT / "clients/godot/examples/dialogue_panel.gd"
UNITY_CLIENT = ROOT / "clients/unity/Runtime/StarHarnessClient.cs"
UNITY_FRAMES = ROOT / "clients/unity/Runtime/Frames.cs"
UNREAL_HEADER = ROOT / "clients/unreal/Source/StarHarnessClient/Public/StarHarnessClientComponent.h"
UNREAL_SOURCE = (
    ROOT / "clients/unreal/Source/StarHarnessClient/Private/StarHarnessClientComponent.cpp"
)


def _schema() -> dict[str, Any]:
    return json.loads(SCHEMA.read_text(encoding="utf-8"))


def _down_types() -> list[str]:
    mapping = _schema()["$defs"]["DownFrame"]["discriminator"]["mapping"]
    return sorted(mapping)


DOWN_TYPES = _down_types()


def _snake(tag: str) -> str:
    return tag.replace(".", "_")


def _pascal(tag: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[._]", tag))


def test_the_schema_lists_the_eleven_down_frames() -> None:
    # Guards the helper above: a schema reshuffle must not make every other test vacuous.
    # 11: the protocol grew deliberately (revision 3's `scene.players`).
    assert len(DOWN_TYPES) == 11
    assert {"welcome", "say.delta", "hud", "error", "scene.players"} <= set(DOWN_TYPES)


# --- Python (the library and the terminal client) ---------------------------------------


def _sample(schema: dict[str, Any], definitions: dict[str, Any]) -> Any:
    """A minimal instance of `schema` (enough to build every frame from the schema alone)."""
    if "$ref" in schema:
        return _sample(definitions[schema["$ref"].rsplit("/", 1)[1]], definitions)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        properties: dict[str, Any] = schema.get("properties", {})
        return {name: _sample(properties[name], definitions) for name in schema.get("required", [])}
    if kind == "array":
        return []
    if kind == "string":
        return "x"
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "boolean":
        return True
    return {}


class _Recorder(DownFrameHandler):
    def __init__(self) -> None:
        self.calls: list[str] = []

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("on_"):
            return lambda frame: object.__getattribute__(self, "calls").append(name)
        return object.__getattribute__(self, name)


@pytest.mark.parametrize("tag", DOWN_TYPES)
def test_python_dispatch_routes_each_frame_type_to_its_own_handler(tag: str) -> None:
    definitions = _schema()["$defs"]
    model_name = definitions["DownFrame"]["discriminator"]["mapping"][tag].rsplit("/", 1)[1]
    frame = GENERIC_PROTOCOL.parse_down_frame(
        json.dumps(_sample(definitions[model_name], definitions))
    )
    recorder = _Recorder()

    dispatch(recorder, frame)

    assert recorder.calls == [handler_name(tag)]
    assert HANDLER_NAMES[tag] == handler_name(tag)


@pytest.mark.parametrize("tag", DOWN_TYPES)
def test_the_terminal_client_renders_each_frame_type(tag: str) -> None:
    name = handler_name(tag)
    assert getattr(TalkView, name) is not getattr(DownFrameHandler, name), (
        f"TalkView does not override {name} for {tag!r} frames"
    )


# --- Godot -----------------------------------------------------------------------------


def _gd_tree(path: Path) -> Tree[Token]:
    return parser.parse(path.read_text(encoding="utf-8"))


def _gd_signals(path: Path) -> set[str]:
    return {str(statement.children[0]) for statement in _gd_tree(path).find_data("signal_stmt")}


def _gd_branches(path: Path) -> dict[str, list[str]]:
    """Each string pattern of a `match` branch and the names used in its body."""
    branches: dict[str, list[str]] = {}
    for branch in _gd_tree(path).find_data("match_branch"):
        values = [str(token) for token in branch.scan_values(lambda v: isinstance(v, Token))]
        if values and values[0].startswith('"'):
            branches[values[0].strip('"')] = values[1:]
    return branches


@pytest.mark.parametrize("tag", DOWN_TYPES)
def test_godot_emits_one_signal_for_each_frame_type(tag: str) -> None:
    signal = _snake(tag)
    assert signal in _gd_signals(GODOT_CLIENT), f"no `signal {signal}` in {GODOT_CLIENT.name}"
    body = _gd_branches(GODOT_CLIENT).get(tag)
    assert body is not None, f"the dispatch `match` has no branch for {tag!r}"
    emits = any(body[i : i + 3] == [signal, ".", "emit"] for i in range(len(body)))
    assert emits, f"the {tag!r} branch does not emit `{signal}`"


@pytest.mark.parametrize("tag", DOWN_TYPES)
def test_the_godot_example_renders_each_frame_type(tag: str) -> None:
    source = GODOT_EXAMPLE.read_text(encoding="utf-8")
    assert f"StarHarness.{_snake(tag)}.connect(" in source


# --- Unity -----------------------------------------------------------------------------


@pytest.mark.parametrize("tag", DOWN_TYPES)
def test_unity_raises_one_event_for_each_frame_type(tag: str) -> None:
    source = UNITY_CLIENT.read_text(encoding="utf-8")
    event = f"On{_pascal(tag)}"
    assert re.search(rf"public event Action<\w+Frame> {event};", source), f"no event {event}"
    case = re.search(rf'case "{re.escape(tag)}":\s*Raise\((\w+),', source)
    assert case is not None, f'no `case "{tag}":` raising an event in the dispatch'
    assert case.group(1) == event


@pytest.mark.parametrize("tag", DOWN_TYPES)
def test_unity_has_a_dto_for_each_frame_type(tag: str) -> None:
    source = UNITY_FRAMES.read_text(encoding="utf-8")
    dto = "ActionFrame" if tag == "action" else f"{_pascal(tag)}Frame"
    assert f"public sealed class {dto}" in source


# --- Unreal (a sketch, checked for shape) ------------------------------------------------


@pytest.mark.parametrize("tag", DOWN_TYPES)
def test_unreal_broadcasts_one_delegate_for_each_frame_type(tag: str) -> None:
    header = UNREAL_HEADER.read_text(encoding="utf-8")
    source = UNREAL_SOURCE.read_text(encoding="utf-8")
    delegate = f"On{_pascal(tag)}"
    assert re.search(rf"UPROPERTY\(BlueprintAssignable\) \w+ {delegate};", header)
    branch = re.search(rf'Type == TEXT\("{re.escape(tag)}"\)\)\s*\{{(?P<body>[^}}]*)\}}', source)
    assert branch is not None, f'no branch for TEXT("{tag}")'
    assert f"{delegate}.Broadcast(" in branch.group("body")


# --- Offers: an options item with `offer` reaches every engine with its action and cost ----

UNREAL_FRAMES = ROOT / "clients/unreal/Source/StarHarnessClient/Public/StarHarnessFrames.h"


def test_the_schema_gives_options_items_offer_terms() -> None:
    # Guards the checks below: they mean something only while the protocol has offers.
    definitions = _schema()["$defs"]
    assert "offer" in definitions["OptionItem"]["properties"]
    assert {"action", "cost"} <= set(definitions["OfferTerms"]["properties"])


def _struct(header: str, name: str) -> str:
    found = re.search(rf"struct {name}\s*\{{(?P<body>[^}}]*)\}};", header)
    assert found is not None, f"no struct {name}"
    return found.group("body")


def test_unreal_options_carry_offer_terms() -> None:
    header = UNREAL_FRAMES.read_text(encoding="utf-8")
    terms = _struct(header, "FStarHarnessOfferTerms")
    assert "UPROPERTY(BlueprintReadOnly) FString Action;" in terms
    assert "UPROPERTY(BlueprintReadOnly) FString Cost;" in terms
    option = _struct(header, "FStarHarnessOption")
    assert "UPROPERTY(BlueprintReadOnly) FStarHarnessOfferTerms Offer;" in option
    assert "UPROPERTY(BlueprintReadOnly) bool bIsOffer = false;" in option
    source = UNREAL_SOURCE.read_text(encoding="utf-8")
    branch = re.search(r'Type == TEXT\("options"\)\)\s*\{(?P<body>[^}]*)\}', source)
    assert branch is not None
    body = branch.group("body")
    assert body.index("MarkOffers(Object, Frame);") < body.index("OnOptions.Broadcast(")
    assert 'HasTypedField<EJson::Object>(TEXT("offer"))' in source
