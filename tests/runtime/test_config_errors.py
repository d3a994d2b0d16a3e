"""Profile errors: one line that names the row and the field, the file or the missing service."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, Field

from starharness.runtime.config import Patch, ProfileError, load_profile
from starharness.runtime.kernel import Context, NoConfig, Plugin, ServiceKey

WIDGETS: ServiceKey[list[str]] = ServiceKey("test-widgets", "add the widgets plugin")
SESSIONS_LIKE: ServiceKey[object] = ServiceKey("sessions")


class Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")
    connect_s: float = Field(default=1.0, gt=0)


class StrictConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    limits: Limits = Limits()


class Strict(Plugin[StrictConfig]):
    Config = StrictConfig

    async def setup(self, ctx: Context, config: StrictConfig) -> None:
        pass


class Widgets(Plugin[NoConfig]):
    provides = (WIDGETS,)

    async def setup(self, ctx: Context, config: NoConfig) -> None:
        ctx.provide(WIDGETS, [])


class NeedsWidgets(Plugin[NoConfig]):
    inject = (WIDGETS,)

    async def setup(self, ctx: Context, config: NoConfig) -> None:
        pass


class NeedsSessions(Plugin[NoConfig]):
    inject = (SESSIONS_LIKE,)

    async def setup(self, ctx: Context, config: NoConfig) -> None:
        pass


class NotAPlugin:
    pass


ME = __name__


def profile_with(tmp_path: Path, rows: str) -> Path:
    path = tmp_path / "p.yml"
    body = textwrap.indent(textwrap.dedent(rows).strip(), " " * 6)
    path.write_text(f"bundles:\n  - name: b\n    rows:\n{body}\n", encoding="utf-8")
    return path


def load_error(path: Path | str, tmp_path: Path, patches: list[Patch] | None = None) -> str:
    with pytest.raises(ProfileError) as caught:
        load_profile(path, patches or [], search=[tmp_path], home=tmp_path / "home")
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_unknown_import_path_names_the_row_and_the_plugin(tmp_path: Path) -> None:
    path = profile_with(tmp_path, "- {id: brain, plugin: 'nowhere.at_all:Brain'}")
    message = load_error(path, tmp_path)
    assert message.startswith("row 'brain': unknown plugin 'nowhere.at_all:Brain'")
    assert "No module named 'nowhere'" in message


def test_missing_class_in_a_real_module(tmp_path: Path) -> None:
    path = profile_with(tmp_path, f"- {{id: brain, plugin: '{ME}:Missing'}}")
    message = load_error(path, tmp_path)
    assert f"row 'brain': unknown plugin '{ME}:Missing'" in message
    assert "has no attribute 'Missing'" in message


def test_unknown_entry_point_name(tmp_path: Path) -> None:
    path = profile_with(tmp_path, "- {id: brain, plugin: no-such-plugin}")
    message = load_error(path, tmp_path)
    assert message.startswith("row 'brain': unknown plugin 'no-such-plugin'")
    assert "star_harness.plugins" in message


def test_a_class_that_is_not_a_plugin_is_refused(tmp_path: Path) -> None:
    path = profile_with(tmp_path, f"- {{id: odd, plugin: '{ME}:NotAPlugin'}}")
    assert "not a Plugin subclass" in load_error(path, tmp_path)


def test_bad_config_names_the_row_and_the_field_path(tmp_path: Path) -> None:
    path = profile_with(
        tmp_path,
        f"""
        - id: strict
          plugin: '{ME}:Strict'
          config: {{name: x, limits: {{connect_s: -1}}}}
        """,
    )
    message = load_error(path, tmp_path)
    assert message.startswith(f"row 'strict' ({ME}:Strict): config.limits.connect_s:")
    assert "greater than 0" in message


def test_missing_and_unknown_config_fields(tmp_path: Path) -> None:
    path = profile_with(tmp_path, f"- {{id: strict, plugin: '{ME}:Strict', config: {{nme: x}}}}")
    message = load_error(path, tmp_path)
    assert "row 'strict'" in message
    assert "config.name: Field required (and 1 more)" in message


def test_a_bad_value_is_not_echoed(tmp_path: Path) -> None:
    path = profile_with(
        tmp_path,
        f"- {{id: strict, plugin: '{ME}:Strict', config: {{name: x, api_key: sk-hush-1234}}}}",
    )
    message = load_error(path, tmp_path)
    assert "config.api_key: Extra inputs are not permitted" in message
    assert "sk-hush-1234" not in message


def test_missing_service_with_no_provider(tmp_path: Path) -> None:
    path = profile_with(tmp_path, f"- {{id: user, plugin: '{ME}:NeedsWidgets'}}")
    message = load_error(path, tmp_path)
    assert message == (
        f"row 'user' ({ME}:NeedsWidgets) needs the service 'test-widgets' but no row provides it"
        " (add the widgets plugin)"
    )


def test_missing_runtime_service_names_the_builtin_plugin(tmp_path: Path) -> None:
    path = profile_with(tmp_path, f"- {{id: user, plugin: '{ME}:NeedsSessions'}}")
    message = load_error(path, tmp_path)
    assert "needs the service 'sessions'" in message
    assert "add a row with plugin starharness.runtime.session:SessionsPlugin" in message


def test_service_provided_too_late(tmp_path: Path) -> None:
    path = profile_with(
        tmp_path,
        f"""
        - {{id: user, plugin: '{ME}:NeedsWidgets'}}
        - {{id: widgets, plugin: '{ME}:Widgets'}}
        """,
    )
    message = load_error(path, tmp_path)
    assert "row 'user'" in message
    assert "'test-widgets'" in message
    assert f"which row 'widgets' ({ME}:Widgets) provides but starts later" in message


def test_duplicate_row_ids_across_bundles(tmp_path: Path) -> None:
    (tmp_path / "dup.yml").write_text(
        f"bundles:\n"
        f"  - {{name: one, rows: [{{id: w, plugin: '{ME}:Widgets'}}]}}\n"
        f"  - {{name: two, rows: [{{id: w, plugin: '{ME}:Widgets'}}]}}\n",
        encoding="utf-8",
    )
    message = load_error("dup", tmp_path)
    assert "row id 'w' appears in bundle 'one' and again in bundle 'two'" in message


def test_unknown_profile_lists_the_known_ones(tmp_path: Path) -> None:
    (tmp_path / "alpha.yml").write_text("bundles: [x]\n", encoding="utf-8")
    (tmp_path / "alpha.patch.yml").write_text("[]\n", encoding="utf-8")
    message = load_error("beta", tmp_path)
    assert message == "unknown profile 'beta' (known profiles: alpha; or give a file path)"


def test_missing_files(tmp_path: Path) -> None:
    assert "profile file" in load_error(tmp_path / "absent.yml", tmp_path)
    path = profile_with(tmp_path, f"- {{id: w, plugin: '{ME}:Widgets'}}")
    with pytest.raises(ProfileError, match=r"patch file .*nope\.yml does not exist"):
        load_profile(path, [tmp_path / "nope.yml"], home=tmp_path / "home")
    (tmp_path / "b.yml").write_text("bundles: [nonexistent]\n", encoding="utf-8")
    assert "bundle 'nonexistent' not found" in load_error("b", tmp_path)


def test_invalid_yaml_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "bad.yml").write_text("bundles:\n  - [unclosed\n", encoding="utf-8")
    message = load_error("bad", tmp_path)
    assert "bad.yml: invalid YAML at line" in message


def test_shape_errors_name_the_field(tmp_path: Path) -> None:
    (tmp_path / "shape.yml").write_text(
        "bundles:\n  - name: b\n    rows:\n      - {id: w, plugn: x}\n", encoding="utf-8"
    )
    message = load_error("shape", tmp_path)
    assert "bundles[0].rows[0]" in message
    assert "plugin" in message or "plugn" in message


def test_bad_patch_rows(tmp_path: Path) -> None:
    path = profile_with(tmp_path, f"- {{id: w, plugin: '{ME}:Widgets'}}")
    add_without_plugin = Patch.of("p1", [{"id": "new", "config": {}}])
    assert (
        load_error(path, tmp_path, [add_without_plugin])
    ) == "patch p1: row 'new' is not in profile 'p'; to add the row, give its 'plugin'"
    remove_missing = Patch.of("p2", [{"id": "ghost", "remove": True}])
    assert "row 'ghost' cannot be removed" in load_error(path, tmp_path, [remove_missing])
    bad_anchor = Patch.of("p3", [{"id": "w", "after": "ghost"}])
    assert "there is no row 'ghost'" in load_error(path, tmp_path, [bad_anchor])
    with pytest.raises(ProfileError, match=r"either 'config' .* or 'merge'"):
        Patch.of("p4", [{"id": "w", "config": {}, "merge": {}}])
    (tmp_path / "patch.yml").write_text("- {id: w, remove: true, plugin: x}\n", encoding="utf-8")
    with pytest.raises(ProfileError, match="remove: true' row takes no other change"):
        load_profile(path, [tmp_path / "patch.yml"], home=tmp_path / "home")
