"""Every frame of a played Omega station session validates against the game's own schema.

The schema is the one `star-harness schema --game starharness.voyage:GAME` writes (the one
shipped as docs/frames.schema.json), so an engine that generates its types from it accepts
everything the sample game sends: its seven moods, its attitude range, its HUD.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from voyage_e2e_support import Frame, Player, offers, serving_voyage

from starharness.voyage.content import BROKER, PLAYER_ID, SMUGGLER

DOCS_SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "frames.schema.json"
FRAMEWORK_MOODS = {"neutral", "friendly", "annoyed", "hostile"}
"""The four moods the old checked-in schema allowed; the game uses more."""


class RecordingPlayer(Player):
    """A player that keeps every frame it sent and received."""

    sent: list[Frame]
    received: list[Frame]

    async def send(self, frame: Frame) -> None:
        self.sent.append(frame)
        await super().send(frame)

    async def recv(self) -> Frame:
        frame = await super().recv()
        self.received.append(frame)
        return frame


def _generated_schema(tmp_path: Path, game: str) -> dict[str, Any]:
    out = tmp_path / "frames.schema.json"
    command = [sys.executable, "-m", "starharness.cli", "schema", "--game", game, "--out"]
    subprocess.run([*command, str(out)], check=True, capture_output=True, timeout=120)
    schema: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return schema


async def test_every_frame_of_a_session_matches_the_games_schema(tmp_path: Path) -> None:
    schema = _generated_schema(tmp_path, "starharness.voyage:GAME")
    assert schema == json.loads(DOCS_SCHEMA.read_text(encoding="utf-8")), "docs schema is stale"
    validator = Draft202012Validator(schema)
    async with serving_voyage(tmp_path) as stack:
        me = RecordingPlayer(stack.running.ws_url, PLAYER_ID)
        me.sent, me.received = [], []
        async with me:
            await me.hello()
            greeting = await me.open("e1", SMUGGLER)
            await me.pick("e1", offers(greeting)[0]["id"])
            await me.say("e1", "I'll buy 5 nebula spice")
            await me.say("e1", "cheaper fuel, please")
            await me.say("e1", "any rumours?")
            await me.say("e1", "what are your prices?")
            await me.send({"t": "encounter.say", "id": "e1", "optionId": "no-such-option"})
            await me.until(lambda f: f["t"] == "error")
            await me.send({"t": "world.tick", "days": 10})
            await me.until(lambda f: f["t"] == "hud")
            await me.close("e1")
            await me.open("e2", BROKER)
            await me.close("e2")
    kinds = {frame["t"] for frame in me.received}
    assert {"welcome", "encounter.opened", "say.delta", "say.end", "options", "action"} <= kinds
    assert any("offer" in item for f in me.received if f["t"] == "options" for item in f["items"])
    assert {"encounter.idle", "error", "hud", "world.event"} <= kinds
    moods = {frame["mood"] for frame in me.received if frame["t"] == "say.end"}
    assert moods - FRAMEWORK_MOODS, f"the session used only the framework's moods: {moods}"
    for frame in me.sent + me.received:
        errors = [e.message for e in validator.iter_errors(frame)]
        assert not errors, f"{frame} does not match the game's schema: {errors[:3]}"
