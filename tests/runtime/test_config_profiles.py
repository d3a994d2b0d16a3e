"""Profiles: bundles in order, patches by row id in their documented order, the dumped tree."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, ConfigDict

from starharness.runtime.config import (
    Patch,
    ResolvedProfile,
    dump_profile,
    load_profile,
    merge_patch,
    profile_tree,
)
from starharness.runtime.kernel import Context, NoConfig, Plugin, ServiceKey

JOURNAL: ServiceKey[list[str]] = ServiceKey("test-journal")


class Nested(BaseModel):
    model_config = ConfigDict(extra="forbid")
    flag: bool = False
    level: int = 0


class RecorderConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str = "none"
    count: int = 1
    nested: Nested = Nested()


class Journal(Plugin[NoConfig]):
    provides = (JOURNAL,)

    async def setup(self, ctx: Context, config: NoConfig) -> None:
        ctx.provide(JOURNAL, [f"setup {ctx.name}"])


class Recorder(Plugin[RecorderConfig]):
    Config = RecorderConfig
    inject = (JOURNAL,)

    async def setup(self, ctx: Context, config: RecorderConfig) -> None:
        journal = ctx.get(JOURNAL)
        journal.append(f"setup {ctx.name} {config.label}")
        ctx.scope.add(lambda: journal.append(f"dispose {ctx.name}"))


class Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class LoosePlugin(Plugin[Loose]):
    Config = Loose

    async def setup(self, ctx: Context, config: Loose) -> None:
        pass


class EchoConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    words: int = 1


class Echo(Plugin[EchoConfig]):
    Config = EchoConfig

    async def setup(self, ctx: Context, config: EchoConfig) -> None:
        pass


ME = __name__
JOURNAL_PLUGIN = f"{ME}:Journal"
RECORDER = f"{ME}:Recorder"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def profiles(tmp_path: Path) -> Path:
    """A profile folder with `demo.yml` (a named bundle plus an inline one)."""
    folder = tmp_path / "profiles"
    write(
        folder / "bundles" / "base.yml",
        f"""
        - id: journal
          plugin: {JOURNAL_PLUGIN}
        - id: first
          plugin: {RECORDER}
          config: {{label: one, nested: {{flag: true}}}}
        """,
    )
    write(
        folder / "demo.yml",
        f"""
        description: a demo profile
        bundles:
          - base
          - name: extra
            rows:
              - id: second
                plugin: {RECORDER}
                config: {{label: two}}
        """,
    )
    return folder


def ids(profile: ResolvedProfile) -> list[str]:
    return [row.id for row in profile.rows]


def label(profile: ResolvedProfile, row_id: str) -> Any:
    return profile.row(row_id).config.model_dump()["label"]


def test_bundles_stack_in_order_and_configs_are_validated(profiles: Path, home: Path) -> None:
    profile = load_profile("demo", search=[profiles], home=home)

    assert profile.name == "demo"
    assert profile.description == "a demo profile"
    assert ids(profile) == ["journal", "first", "second"]
    assert [row.bundle for row in profile.rows] == ["base", "base", "extra"]
    first = profile.row("first").config
    assert isinstance(first, RecorderConfig)
    assert first.nested.flag is True
    assert first.count == 1  # defaults are filled in
    assert profile.row("second").plugin_class is Recorder
    assert profile.patches == ()


def test_a_profile_can_be_loaded_by_path(profiles: Path, home: Path) -> None:
    profile = load_profile(profiles / "demo.yml", home=home)
    assert profile.name == "demo"
    assert ids(profile) == ["journal", "first", "second"]


def test_patch_layers_apply_profile_then_user_then_explicit(
    profiles: Path, home: Path, tmp_path: Path
) -> None:
    write(profiles / "demo.patch.yml", "- {id: first, config: {label: from-profile, count: 5}}\n")
    write(home / "patch.yml", "- {id: first, merge: {label: from-user}}\n")
    explicit = write(tmp_path / "mine.yml", "- {id: second, config: {label: from-file}}\n")
    in_code = Patch.of("code", [{"id": "first", "merge": {"nested": {"level": 3}}}])

    profile = load_profile("demo", [explicit, in_code], search=[profiles], home=home)

    first = profile.row("first").config.model_dump()
    # `config` replaced the bundle's whole config (nested.flag is back to its default),
    # then the user's merge patch changed only the label, then the code patch one nested key.
    assert first == {"label": "from-user", "count": 5, "nested": {"flag": False, "level": 3}}
    assert label(profile, "second") == "from-file"
    assert profile.patches == (
        str(profiles / "demo.patch.yml"),
        str(home / "patch.yml"),
        str(explicit),
        "code",
    )
    assert profile.row("first").patched_by == (
        str(profiles / "demo.patch.yml"),
        str(home / "patch.yml"),
        "code",
    )


def test_later_patches_win(profiles: Path, home: Path, tmp_path: Path) -> None:
    one = write(tmp_path / "one.yml", "- {id: second, config: {label: one}}\n")
    two = write(tmp_path / "two.yml", "- {id: second, config: {label: two-again}}\n")
    assert label(load_profile("demo", [one, two], search=[profiles], home=home), "second") == (
        "two-again"
    )
    assert label(load_profile("demo", [two, one], search=[profiles], home=home), "second") == "one"


def test_patches_add_place_and_remove_rows(profiles: Path, home: Path, tmp_path: Path) -> None:
    patch = write(
        tmp_path / "rows.yml",
        f"""
        - id: added-last
          plugin: {RECORDER}
        - id: added-early
          plugin: {RECORDER}
          config: {{label: early}}
          after: journal
        - id: second
          remove: true
        - id: first
          before: added-last
        """,
    )
    profile = load_profile("demo", [patch], search=[profiles], home=home)
    assert ids(profile) == ["journal", "added-early", "first", "added-last"]
    assert label(profile, "added-early") == "early"
    assert profile.row("added-last").bundle == f"patch {patch}"


def test_a_patch_row_can_be_limited_to_some_profiles(
    profiles: Path, home: Path, tmp_path: Path
) -> None:
    patch = write(
        tmp_path / "limited.yml",
        """
        - {id: first, merge: {label: only-elsewhere}, profiles: [other]}
        - {id: second, merge: {label: only-demo}, profiles: [demo]}
        """,
    )
    profile = load_profile("demo", [patch], search=[profiles], home=home)
    assert label(profile, "first") == "one"
    assert label(profile, "second") == "only-demo"


def test_a_patch_can_swap_the_plugin_of_a_row(profiles: Path, home: Path) -> None:
    swap = Patch.of("swap", [{"id": "second", "plugin": f"{ME}:Echo", "config": {"words": 3}}])
    profile = load_profile("demo", [swap], search=[profiles], home=home)
    row = profile.row("second")
    assert row.plugin_class is Echo
    assert row.plugin == f"{ME}:Echo"
    assert row.config.model_dump() == {"words": 3}


def test_user_profiles_folder_shadows_later_search_folders(
    profiles: Path, home: Path, tmp_path: Path
) -> None:
    mine = tmp_path / "mine"
    write(
        mine / "demo.yml",
        f"bundles: [{{name: solo, rows: [{{id: j, plugin: {JOURNAL_PLUGIN}}}]}}]\n",
    )
    profile = load_profile("demo", search=[mine, profiles], home=home)
    assert ids(profile) == ["j"]
    # A name-referenced bundle is still found in the later folders.
    write(mine / "demo.yml", "bundles: [base]\n")
    assert ids(load_profile("demo", search=[mine, profiles], home=home)) == ["journal", "first"]


def test_dump_shows_the_resolved_tree(profiles: Path, home: Path, tmp_path: Path) -> None:
    patch = write(tmp_path / "p.yml", "- {id: second, merge: {count: 7}}\n")
    profile = load_profile("demo", [patch], search=[profiles], home=home)

    tree = yaml.safe_load(dump_profile(profile))

    assert tree == profile_tree(profile)
    assert tree["profile"] == "demo"
    assert tree["patches"] == [str(patch)]
    second = tree["rows"][2]
    assert second["id"] == "second"
    assert second["plugin"] == RECORDER
    assert second["patched_by"] == [str(patch)]
    assert second["config"] == {"label": "two", "count": 7, "nested": {"flag": False, "level": 0}}
    assert "patched_by" not in tree["rows"][0]


def test_dump_redacts_values_under_secret_looking_keys(home: Path, tmp_path: Path) -> None:
    write(
        tmp_path / "loose.yml",
        f"""
        bundles:
          - name: only
            rows:
              - id: loose
                plugin: {ME}:LoosePlugin
                config: {{api_key: sk-very-secret, api_key_env: MY_KEY, inner: {{token: t0k3n}}}}
        """,
    )
    text = dump_profile(load_profile(tmp_path / "loose.yml", home=home))
    assert "sk-very-secret" not in text
    assert "t0k3n" not in text
    assert "MY_KEY" in text  # variable names are not secrets


def test_merge_patch_follows_rfc_7386() -> None:
    target = {"a": 1, "b": {"c": 2, "d": 3}, "e": [1, 2]}
    patch = {"a": None, "b": {"c": None, "x": {"y": None, "z": 1}}, "e": [3]}
    assert merge_patch(target, patch) == {"b": {"d": 3, "x": {"z": 1}}, "e": [3]}
    assert target == {"a": 1, "b": {"c": 2, "d": 3}, "e": [1, 2]}  # not mutated


def test_a_plugin_can_be_named_by_its_entry_point(
    profiles: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    write(site / "demo_ext-1.0.dist-info" / "METADATA", "Name: demo-ext\nVersion: 1.0\n")
    write(
        site / "demo_ext-1.0.dist-info" / "entry_points.txt",
        f"[star_harness.plugins]\ndemo-recorder = {RECORDER}\n",
    )
    monkeypatch.syspath_prepend(str(site))
    patch = Patch.of("ep", [{"id": "ext", "plugin": "demo-recorder", "config": {"label": "ep"}}])

    profile = load_profile("demo", [patch], search=[profiles], home=home)

    assert profile.row("ext").plugin_class is Recorder
    assert label(profile, "ext") == "ep"
