"""Print how big the Omega station prompt parts are (4 characters per token, documented estimate).

Goals from the issue: the scene for the smuggler under 500 tokens even with 500 memories; the
static part (protocol + the archetype's rules + persona + tool schemas) under 1,500 tokens. Tool
schemas are counted as the compact JSON of the OpenAI `tools` array the provider sends, one
entry per action of the smuggler's archetype.

Run: uv run python bench/voyage_tokens.py
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from starharness.npc import GameKit
from starharness.npc.encounter import ArchetypeKit
from starharness.voyage import GAME, PROTOCOL_TEXT, open_world
from starharness.voyage.content import PLAYER_ID, SMUGGLER
from starharness.voyage.store import estimate_tokens

SCENE_GOAL = 500
STATIC_GOAL = 1_500


def _add_memories(path: Path, count: int) -> None:
    goods = ["fuel", "medgel", "spice", "coffee"]
    with open_world(path) as world, world.transaction() as tx:
        for i in range(count):
            if i % 6 == 5:
                tx.remember(SMUGGLER, PLAYER_ID, f"They asked about my old crew again ({i}).")
                continue
            good, qty = goods[i % 4], 5 + i % 7
            action = "bought" if i % 3 else "sold"
            tx.remember(
                SMUGGLER,
                PLAYER_ID,
                f"They {action} {qty} {good} for {qty * 450:,}; paid without a fuss.",
                kind="trade",
                action=action,
                good_id=good,
                qty=qty,
                price=qty * 450,
            )
            if i % 25 == 24:
                tx.set_day(tx.day() + 1)


def tool_schemas_json(kit: ArchetypeKit) -> str:
    """An archetype's tools as the request's `tools` array (compact JSON)."""
    tools = sorted(kit.tools, key=lambda tool: tool.name)  # the registry sends them by name
    entries = [
        {
            "type": "function",
            "function": {
                "name": tool.schema.name,
                "description": tool.schema.description,
                "parameters": tool.schema.parameters,
            },
        }
        for tool in tools
    ]
    return json.dumps(entries, separators=(",", ":"), ensure_ascii=False)


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "world.db"
        with open_world(path) as world:
            card = world.npc(SMUGGLER)
            assert card is not None
            fresh = world.scene(SMUGGLER, PLAYER_ID)
        _add_memories(path, 500)
        with open_world(path) as world:
            world.tick(7)  # brings news into the scene
            busy = world.scene(SMUGGLER, PLAYER_ID)
        kit = GameKit.of(GAME).archetype(card.archetype)
        schemas = tool_schemas_json(kit)
        rules = kit.shared_text
        static = "\n\n".join((PROTOCOL_TEXT, rules, card.persona, schemas))
        rows = [
            ("protocol", PROTOCOL_TEXT, None),
            (f"{card.archetype} rules (the archetype's)", rules, None),
            ("smuggler persona", card.persona, None),
            (f"tool schemas ({len(kit.tools)} tools)", schemas, None),
            ("static (protocol + rules + persona + tools)", static, STATIC_GOAL),
            ("smuggler scene, first visit", fresh, SCENE_GOAL),
            ("smuggler scene, 500 memories, news", busy, SCENE_GOAL),
        ]
        for name, text, goal in rows:
            tokens = estimate_tokens(text)
            verdict = "" if goal is None else f"  goal {goal:,}: {tokens / goal:.0%} of it"
            print(f"{name:44} {len(text):6,} chars  ~{tokens:5,} tokens{verdict}")
        print("\n--- smuggler scene with 500 memories ---\n" + busy)


if __name__ == "__main__":
    main()
