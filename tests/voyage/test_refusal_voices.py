"""One refusal, two voices: the model reads the hint, the player sees the game's line for them."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from voyage_e2e_support import Player, serving_voyage

import starharness.voyage
from starharness.voyage.content import PLAYER_ID, SMUGGLER

VOYAGE = Path(starharness.voyage.__file__).resolve().parent


def test_every_refusal_the_game_writes_has_a_line_for_the_player() -> None:
    missing: list[str] = []
    for path in (VOYAGE / "actions").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Refusal":
                has_line = len(node.args) >= 4 or any(k.arg == "player_line" for k in node.keywords)
                if not has_line:
                    missing.append(f"{path.name}:{node.lineno}")
    assert missing == [], f"refusals without a player line: {missing}"


async def test_the_card_speaks_to_the_player_and_the_hint_to_the_model(tmp_path: Path) -> None:
    async with serving_voyage(tmp_path) as stack, Player(stack.running.ws_url, PLAYER_ID) as me:
        await me.hello()
        await me.open("e1", SMUGGLER)
        frames = await me.say("e1", "I'll buy 5 nebula spice")
        refused = [f for f in frames if f["t"] == "action" and not f["ok"]]
        assert refused, frames
        summary = refused[0]["summary"]
        # Written for the player: "you" is the player, and it says what they have and need.
        assert summary.startswith("You have 12,000 credits; this costs "), summary
        assert "they have" not in summary and "the deal is" not in summary
        # The model was given the hint written for it, not the player's line.
        tool_texts = [
            str(message["content"])
            for request in stack.mock.requests
            for message in request.body["messages"]
            if message["role"] == "tool"
        ]
        refusals = [json.loads(text) for text in tool_texts if '"ok":false' in text]
        assert refusals and refusals[0]["reason"] == "insufficient_funds"
        assert refusals[0]["hint"].startswith("they have 12,000, the deal is ")
        assert not any(summary in text for text in tool_texts)
