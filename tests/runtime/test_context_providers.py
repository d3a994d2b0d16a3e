"""Context providers: AGENTS.md (nested, byte budget), the date, references to other sessions;
all plugins with config, and in the godot profile's `config --dump`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from context_support import context_runtime
from loop_support import Recorder, create_agent

from starharness.cli import run_cli
from starharness.mockllm import MockLlmServer, Success
from starharness.runtime.context import (
    AgentsMdConfig,
    TimeContextPlugin,
    find_instructions,
    render_instructions,
)
from starharness.runtime.loop import AGENTS, SESSION_EVENT, AgentHandle
from starharness.runtime.prompt import PROMPT
from starharness.runtime.session import SESSIONS
from starharness.runtime.session import event_types as ev


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


def _project(root: Path) -> Path:
    (root / "game" / "player").mkdir(parents=True)
    (root / "game" / ".git").mkdir()
    (root / "game" / "AGENTS.md").write_text("Use tabs in GDScript.\n", encoding="utf-8")
    (root / "game" / "player" / "AGENTS.md").write_text(
        "Player code: keep physics in _physics_process. " + "x" * 400, encoding="utf-8"
    )
    (root / "game" / ".git" / "AGENTS.md").write_text("never read", encoding="utf-8")
    return root / "game"


def test_nested_agents_md_files_in_order_and_within_the_budget(tmp_path: Path) -> None:
    root = _project(tmp_path)
    found = find_instructions(root, AgentsMdConfig())
    assert [f.relative for f in found] == ["AGENTS.md", "player/AGENTS.md"]
    text = render_instructions(found, 100)
    assert text is not None
    assert "## AGENTS.md\nUse tabs in GDScript." in text
    assert "## player/AGENTS.md\nPlayer code" in text
    assert "more bytes of player/AGENTS.md over the budget" in text
    assert "never read" not in text
    small = render_instructions(found, 21)
    assert small is not None and "Not included, over the budget: player/AGENTS.md" in small


async def test_instructions_time_and_references_reach_the_model_and_the_log(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path)
    days = iter([datetime(2026, 12, 1, 9, tzinfo=UTC)] * 2 + [datetime(2026, 12, 2, 9, tzinfo=UTC)])
    monkeypatch.setattr(TimeContextPlugin, "clock", staticmethod(lambda: next(days)))
    db = home / "s.db"
    async with MockLlmServer() as mock:
        mock.script("old", [Success(text="the door code is 1234")])
        mock.script("new", [Success(text="a"), Success(text="b"), Success(text="c")])
        async with context_runtime(mock.base_url, home, [], store="sqlite", path=db) as rt:
            handle, _ = await create_agent(rt.ctx, "old")
            handle.agent.followup("remember the door code")
            await handle.agent.when_idle()
            await handle.dispose()
            await rt.ctx.get(SESSIONS).flush()
        rows = [
            {
                "id": "agents-md",
                "plugin": "starharness.runtime.context:AgentsMdPlugin",
                "config": {"root": str(root)},
            },
            {"id": "time", "plugin": "starharness.runtime.context:TimeContextPlugin"},
            {
                "id": "refs",
                "plugin": "starharness.runtime.context:SessionReferencesPlugin",
                "config": {"sessions": [{"id": "old", "max_bytes": 200}, {"id": "gone"}]},
            },
        ]
        async with context_runtime(mock.base_url, home, rows, store="sqlite", path=db) as rt:
            handle, rec = await create_agent(rt.ctx, "new")
            for text in ("one", "two", "three"):
                handle.agent.followup(text)
                await handle.agent.when_idle()
            await handle.dispose()
        first = mock.requests[1].body["messages"]
    system = first[0]["content"]
    assert "Use tabs in GDScript." in system and "## player/AGENTS.md" in system
    assert "## Session old" in system and "the door code is 1234" in system
    assert "## Session gone\n(not in the session store)" in system
    contexts = [e.data["content"] for e in rec.of(ev.USER_MESSAGE) if e.data["source"] == "context"]
    # Logged once per change of its text: day one for two turns, then day two.
    assert contexts == [
        "Current date: 2026-12-01 (Tuesday) UTC",
        "Current date: 2026-12-02 (Wednesday) UTC",
    ]
    assert "Current date: 2026-12-01" in json.dumps(first)
    # The context comes just before the turn's words (a small model answers what it read last).
    last = mock.requests[-1].body["messages"]
    assert [m["content"] for m in last[-2:]] == [
        "Current date: 2026-12-02 (Wednesday) UTC",
        "three",
    ]


def test_the_godot_profile_dump_shows_every_context_row(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(["config", "--dump", "--profile", "godot"]) == 0
    tree = yaml.safe_load(capsys.readouterr().out)
    rows = {row["id"]: row for row in tree["rows"]}
    for row in ("agents-md", "time", "session-references", "spill", "compaction", "goals"):
        assert rows[row]["plugin"].startswith("starharness.runtime.context:")
    assert rows["spill"]["config"]["max_inline_bytes"] == 50_000
    assert rows["compaction"]["config"]["threshold_ratio"] == 0.8
    assert rows["agents-md"]["config"]["max_bytes"] == 32_768
    assert "godot_play_errors" in rows["delegate"]["config"]["tools"]
    assert "write_file" not in rows["delegate"]["config"]["tools"]


async def test_a_context_that_cannot_be_rendered_ends_its_turn_but_keeps_the_words(
    home: Path,
) -> None:
    def broken(_ctx: object) -> str:
        raise RuntimeError("the scene is gone")

    async with (
        MockLlmServer() as mock,
        context_runtime(mock.base_url, home, []) as rt,
    ):
        handle, rec = await create_agent(rt.ctx, "s")
        handle.agent.ctx.get(PROMPT).context("broken", 0, broken)
        handle.agent.followup("hello there")
        await handle.agent.when_idle()
        await handle.dispose()
    said = [e.data["content"] for e in rec.of(ev.USER_MESSAGE)]
    assert said == ["hello there"]
    (end,) = [e.data for e in rec.of(ev.TURN_END)]
    assert end["reason"] == "error" and "the scene is gone" in end["error"]
    assert mock.requests == []


async def test_each_context_entry_is_logged_only_when_its_own_text_changed(home: Path) -> None:
    # A scene that rarely changes beside a recall that changes every turn: a model server
    # that reuses the prompt it evaluated must not be sent the scene again each turn.
    scene = ["the bar, quiet"]
    recalls = iter(["recall 1", "recall 2", "recall 2", "recall 3", "recall 3"])
    db = home / "s.db"

    def install(handle: AgentHandle) -> None:
        prompt = handle.agent.ctx.get(PROMPT)
        prompt.context("scene", 0, lambda _ctx: scene[0])
        prompt.context("recall", 1, lambda _ctx: next(recalls))

    async with MockLlmServer() as mock:
        async with context_runtime(mock.base_url, home, [], store="sqlite", path=db) as rt:
            handle, rec = await create_agent(rt.ctx, "s")
            install(handle)
            for said in ("one", "two", "three", "four"):
                if said == "four":
                    scene[0] = "the bar, a fight breaks out"
                handle.agent.followup(said)
                await handle.agent.when_idle()
            await handle.dispose()
            await rt.ctx.get(SESSIONS).flush()
        logged = [
            (e.data.get("entry"), e.data["content"])
            for e in rec.of(ev.USER_MESSAGE)
            if e.data.get("source") == "context"
        ]
        assert logged == [
            ("scene", "the bar, quiet"),
            ("recall", "recall 1"),
            ("recall", "recall 2"),
            ("scene", "the bar, a fight breaks out"),
            ("recall", "recall 3"),
        ]
        # The request of turn four: the old scene, the new scene and the recall, in order,
        # just before the player's words.
        last = [m["content"] for m in mock.requests[-1].body["messages"][-3:]]
        assert last == ["the bar, a fight breaks out", "recall 3", "four"]
        # Resumed from the log, the agent knows what each entry last said: nothing changed,
        # nothing is logged again.
        async with context_runtime(mock.base_url, home, [], store="sqlite", path=db) as rt:
            rec = Recorder()
            handle = await rt.ctx.get(AGENTS).resume(
                "s", setup=lambda agent_ctx: agent_ctx.on(SESSION_EVENT, rec)
            )
            assert handle.agent.resumed
            install(handle)
            handle.agent.followup("five")
            await handle.agent.when_idle()
            await handle.dispose()
        assert [e.data["content"] for e in rec.of(ev.USER_MESSAGE)] == ["five"]
