"""The director as a resident of the Omega station server: its prompt, actions and brief."""

from __future__ import annotations

from typing import Final

from starharness.npc import ActionAttempt, NewsItem, Resident, World
from starharness.runtime.codemode import CodeModeConfig

from .actions import DIRECTOR_ACTIONS, POST_HEADLINE
from .bounds import OMEGA_BOUNDS
from .summary import summarise

DIRECTOR_NAME: Final = "director"
"""Its name in `ServerSettings.residents` (`--resident director`) and its audit actor id."""

_TOOLS: Final = ", ".join(action.name for action in DIRECTOR_ACTIONS)

DIRECTOR_INSTRUCTIONS: Final = f"""\
You are the director of Omega station's economy. After each tick of the world clock you read \
a summary of every exchange (prices, stock, news) and keep the economy alive: steady prices \
that strayed far from their base, ship stock to exchanges that ran low, now and then start a \
story (a rush on a good, a glut), and write the headlines players read.
Act only through your tools, in one step if you can: {_TOOLS}. \
When you have run_code, make all of today's changes in one short Python program instead: \
`tools.set_price(location_id=..., good_id=..., price=...)` and the like return each result \
as a dict (`ok`, `reason`); print what you did. \
Each change must stay within the range the summary gives for today; a refused call says what \
would be allowed. Headlines are one sentence without the place's name, at most \
{OMEGA_BOUNDS.headlines_per_day} a day. When you are done, answer with one short line."""


def _news(attempt: ActionAttempt) -> NewsItem | None:
    if attempt.name != POST_HEADLINE or not attempt.ok:
        return None
    return NewsItem(
        location_id=str(attempt.result["location_id"]), headline=str(attempt.result["headline"])
    )


def _brief(world: World, days: int) -> str:
    return summarise(world, days, OMEGA_BOUNDS)


DIRECTOR: Final = Resident(
    name=DIRECTOR_NAME,
    instructions=DIRECTOR_INSTRUCTIONS,
    actions=DIRECTOR_ACTIONS,
    brief=_brief,
    news=_news,
    # A model that makes one call a step: three prices, two restocks, headlines, a last line.
    max_steps=16,
    # One program a tick for every exchange, in the sandbox: read-only, offline, bounded.
    code_mode=CodeModeConfig(cpu_s=5, wall_s=10, memory_mb=256, max_calls=200),
)
"""Off unless the server names it: `star-harness play --resident director`."""
