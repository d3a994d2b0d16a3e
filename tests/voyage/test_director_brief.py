"""The director's brief: what the summary writes, the offline brain reads back, and the brain's
calls for a tick stay within what the brief allows."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from starharness.voyage import open_world
from starharness.voyage.director import (
    OMEGA_BOUNDS,
    POST_HEADLINE,
    RESTOCK,
    SET_PRICE,
    MarketLine,
    parse_brief,
    plan_tick,
    summarise,
)
from starharness.voyage.director.lines import day_line, headlines_line

_ids = st.from_regex(r"[a-z][a-z0-9-]{0,15}", fullmatch=True)
_names = st.from_regex(r"[A-Za-z][A-Za-z' -]{0,20}[A-Za-z]", fullmatch=True)
_amounts = st.integers(min_value=1, max_value=10_000_000)


@st.composite
def _markets(draw: st.DrawFn) -> MarketLine:
    low = draw(_amounts)
    allowed = draw(st.none() | st.tuples(st.just(low), st.integers(low, low + 1_000_000)))
    return MarketLine(
        location_id=draw(_ids),
        good_id=draw(_ids),
        name=draw(_names),
        price=draw(_amounts),
        base=draw(_amounts),
        allowed=allowed,
        stock=draw(st.integers(0, 100_000)),
        target=draw(st.integers(0, 100_000)),
        max_restock=draw(st.integers(0, 100_000)),
    )


@given(
    st.integers(1, 10_000),
    st.lists(_markets(), max_size=8),
    st.integers(0, 5),
    st.integers(0, 5),
)
def test_a_brief_reads_back_as_written(
    day: int, markets: list[MarketLine], posted: int, most: int
) -> None:
    text = "\n".join(
        [day_line(day, 1), *(m.render() for m in markets), headlines_line(posted, most), "x"]
    )
    brief = parse_brief(text)
    assert brief is not None
    assert brief.day == day
    assert list(brief.markets) == markets
    assert brief.headlines_left == max(0, most - posted)


@given(st.text(max_size=300))
def test_text_without_a_day_is_no_brief(text: str) -> None:
    if not any(line.strip().startswith("Day ") for line in text.splitlines()):
        assert parse_brief(text) is None


def test_the_brains_calls_stay_within_the_brief(tmp_path: Path) -> None:
    with open_world(tmp_path / "world.db") as world:
        for _ in range(20):
            world.tick(1)
            brief = parse_brief(summarise(world, 1, OMEGA_BOUNDS))
            assert brief is not None
            by_market = {(m.location_id, m.good_id): m for m in brief.markets}
            calls = plan_tick(brief)
            headlines = [args for name, args in calls if name == POST_HEADLINE]
            assert len(headlines) <= brief.headlines_left
            for name, args in calls:
                if name == SET_PRICE:
                    market = by_market[(args["location_id"], args["good_id"])]
                    assert market.allowed is not None
                    assert market.allowed[0] <= args["price"] <= market.allowed[1]
                elif name == RESTOCK:
                    market = by_market[(args["location_id"], args["good_id"])]
                    assert 1 <= args["units"] <= market.max_restock
            assert plan_tick(brief) == calls  # deterministic
