"""`star-harness plugin list|add|remove`: third-party rows in the user's patch file."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_protocol_support import KEY_VARIABLES
from starharness import composition
from starharness.cli import run_cli

_PLUGIN_MODULE = """
from typing import ClassVar
from pydantic import BaseModel, ConfigDict
from starharness.runtime.kernel import Context, Plugin


class GreeterConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    greeting: str = "hello"


class GreeterPlugin(Plugin[GreeterConfig]):
    Config: ClassVar[type[BaseModel]] = GreeterConfig

    async def setup(self, ctx: Context, config: GreeterConfig) -> None:
        return None
"""

HAND_WRITTEN = """# my own rows; keep these comments
- id: greeter_b
  plugin: thirdparty_greeter:GreeterPlugin   # the second greeter
  config:
    greeting: hi

# and a change of a built-in row
- id: llm
  merge: {max_tokens: 512}
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty home, no provider keys, and an installed third-party plugin package (a module
    and its distribution's entry point, found on sys.path as an installed one is)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("STAR_HARNESS_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    site = tmp_path / "site"
    site.mkdir()
    (site / "thirdparty_greeter.py").write_text(_PLUGIN_MODULE, encoding="utf-8")
    info = site / "thirdparty_greeter-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: thirdparty-greeter\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[star_harness.plugins]\ngreeter = thirdparty_greeter:GreeterPlugin\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    yield home
    sys.modules.pop("thirdparty_greeter", None)


def ok(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = run_cli(["plugin", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def fails(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = run_cli(["plugin", *args])
    out, err = capsys.readouterr()
    assert code == 2, out
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


def test_add_list_and_remove_a_plugin_by_import_path(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patch = home / "patch.yml"
    out = ok(capsys, "add", "thirdparty_greeter:GreeterPlugin", "--config", '{"greeting": "hey"}')
    assert "added row 'greeter'" in out
    rows = yaml.safe_load(patch.read_text(encoding="utf-8"))
    assert rows == [
        {
            "id": "greeter",
            "plugin": "thirdparty_greeter:GreeterPlugin",
            "config": {"greeting": "hey"},
        }
    ]
    # Every profile starts with it, its config validated.
    for name in ("task", "godot"):
        row = composition.load(name).row("greeter")
        assert row.config.model_dump() == {"greeting": "hey"}
    listed = ok(capsys, "list")
    line = next(line for line in listed.splitlines() if line.startswith("greeter "))
    assert "thirdparty_greeter:GreeterPlugin" in line and f"patch {patch}" in line
    assert any(line.startswith("agents ") for line in listed.splitlines())

    assert "removed row 'greeter'" in ok(capsys, "remove", "greeter")
    assert yaml.safe_load(patch.read_text(encoding="utf-8")) in (None, [])
    assert "greeter" not in [row.id for row in composition.load("task").rows]


def test_an_entry_point_name_and_a_profile_of_its_own(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ok(capsys, "add", "greeter", "--profile", "godot", "--after", "workspace")
    godot = [row.id for row in composition.load("godot").rows]
    assert godot[godot.index("workspace") + 1] == "greeter"
    assert "greeter" not in [row.id for row in composition.load("task").rows]
    listed = ok(capsys, "list")  # task: the row is named as one for another profile
    assert "greeter (profiles: godot)" in listed


def test_adding_and_removing_keeps_the_users_rows_and_comments(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patch = home / "patch.yml"
    patch.write_text(HAND_WRITTEN, encoding="utf-8")
    ok(capsys, "add", "greeter")
    text = patch.read_text(encoding="utf-8")
    assert text.startswith(HAND_WRITTEN)
    assert [row["id"] for row in yaml.safe_load(text)] == ["greeter_b", "llm", "greeter"]
    ok(capsys, "remove", "greeter")
    assert patch.read_text(encoding="utf-8") == HAND_WRITTEN
    ok(capsys, "remove", "greeter_b")
    assert patch.read_text(encoding="utf-8") == (
        "# my own rows; keep these comments\n"
        "\n"
        "# and a change of a built-in row\n"
        "- id: llm\n"
        "  merge: {max_tokens: 512}\n"
    )


def test_a_file_a_program_wrote_in_flow_style(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patch = home / "patch.yml"
    patch.write_text(json.dumps([{"id": "llm", "merge": {"max_tokens": 512}}]), encoding="utf-8")
    ok(capsys, "add", "greeter")
    ok(capsys, "add", "greeter", "--id", "second")
    assert [row["id"] for row in yaml.safe_load(patch.read_text(encoding="utf-8"))] == [
        "llm",
        "greeter",
        "second",
    ]
    ok(capsys, "remove", "greeter")
    assert [row["id"] for row in yaml.safe_load(patch.read_text(encoding="utf-8"))] == [
        "llm",
        "second",
    ]


def test_typos_and_unknown_plugins_get_clear_errors_and_change_nothing(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patch = home / "patch.yml"
    patch.write_text(HAND_WRITTEN, encoding="utf-8")
    err = fails(capsys, "add", "thirdparty_greeter:GreeterPlugn")
    assert "unknown plugin 'thirdparty_greeter:GreeterPlugn'" in err
    assert "did you mean thirdparty_greeter:GreeterPlugin?" in err
    err = fails(capsys, "add", "greter")
    assert "no 'star_harness.plugins' entry point is named 'greter'" in err
    assert "did you mean greeter?" in err
    err = fails(capsys, "add", "thirdparty_greeterr:GreeterPlugin")
    assert "cannot import 'thirdparty_greeterr'" in err
    err = fails(capsys, "add", "greeter", "--config", '{"greting": "hi"}')
    assert "config.greting" in err
    err = fails(capsys, "add", "greeter", "--config", "[1, 2]")
    assert "--config must be a mapping" in err
    # An id a profile already has would swap that row's plugin.
    err = fails(capsys, "add", "greeter", "--id", "agents")
    assert "already has a row 'agents'" in err and "--replace" in err
    # A row placed next to a row no profile has breaks every profile: refused.
    err = fails(capsys, "add", "greeter", "--after", "agnets")
    assert "would not load" in err and "no row 'agnets'" in err
    err = fails(capsys, "remove", "greeter_c")
    assert "has no row 'greeter_c'; did you mean greeter_b?" in err
    err = fails(capsys, "remove", "approvals")
    assert "comes from bundle" in err and "remove: true" in err
    err = fails(capsys, "add", "greeter_b", "--id", "greeter_b")
    assert "unknown plugin" in err
    err = fails(capsys, "add", "greeter", "--id", "greeter_b")
    assert "already has a row 'greeter_b'" in err and "plugin remove greeter_b" in err
    assert patch.read_text(encoding="utf-8") == HAND_WRITTEN


def test_replace_swaps_a_built_in_rows_plugin(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = fails(capsys, "add", "greeter", "--id", "nothere", "--replace", "--profile", "task")
    assert "has a row 'nothere' to replace" in err
    ok(capsys, "add", "greeter", "--id", "telemetry", "--replace")
    row = composition.load("task").row("telemetry")
    assert row.plugin == "greeter"


def test_list_names_a_broken_patch_file(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / "patch.yml").write_text("- id: x\n  remove: true\n", encoding="utf-8")
    err = fails(capsys, "list")
    assert "row 'x' cannot be removed" in err


def test_a_patch_file_that_is_not_text_is_named_plainly(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patch = home / "patch.yml"
    patch.write_bytes(b"\x00\xff\xfe" * 1000)
    for args in (("list",), ("remove", "x"), ("add", "thirdparty_greeter:GreeterPlugin")):
        err = fails(capsys, *args)
        assert f"patch file {patch}: not UTF-8 text (byte 1 is 0xff)" in err
    assert patch.read_bytes() == b"\x00\xff\xfe" * 1000


@st.composite
def _patch_files(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]], list[str], dict[str, str]]:
    """A hand-written patch file: rows in block style, comments above and beside them, blank
    lines, a config in flow or block style; its rows, lead comments and inline comments."""
    count = draw(st.integers(1, 5))
    ids = [f"r{n}" for n in range(count)]
    if draw(st.booleans()):
        ids[draw(st.integers(0, count - 1))] = "llm"
    text, rows, leads, inline = "", [], [], {}
    for row_id in ids:
        if draw(st.booleans()):
            text += "\n"
        if draw(st.booleans()):
            leads.append(f"# about {row_id}")
            text += f"# about {row_id}\n"
        if row_id == "llm":
            tokens = draw(st.integers(1, 9999))
            rows.append({"id": "llm", "merge": {"max_tokens": tokens}})
            text += f"- id: llm\n  merge: {{max_tokens: {tokens}}}\n"
            continue
        plugin = "starharness.runtime.ask_user:AskUserPlugin"
        rows.append({"id": row_id, "plugin": plugin, "profiles": ["task"]})
        note = f"  # {row_id} asks" if draw(st.booleans()) else ""
        if note:
            inline[row_id] = note.strip()
        flow = draw(st.booleans())
        text += f"- id: {row_id}\n  plugin: {plugin}{note}\n"
        text += "  profiles: [task]\n" if flow else "  profiles:\n  - task\n"
    return text, rows, leads, inline


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_remove_cuts_exactly_its_row_and_no_comment(
    home: Path, capsys: pytest.CaptureFixture[str], data: st.DataObject
) -> None:
    text, rows, leads, inline = data.draw(_patch_files())
    gone = data.draw(st.sampled_from([row["id"] for row in rows]))
    patch = home / "patch.yml"
    patch.write_text(text, encoding="utf-8")
    ok(capsys, "remove", gone)
    after = patch.read_text(encoding="utf-8")
    assert (yaml.safe_load(after) or []) == [row for row in rows if row["id"] != gone]
    for comment in leads:  # a comment above a row is the user's: never cut
        assert comment in after
    for row_id, comment in inline.items():
        assert (comment in after) == (row_id != gone)
