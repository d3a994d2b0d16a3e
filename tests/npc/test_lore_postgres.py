"""Lore in PostgreSQL: the world's database holds it (a tsvector column, a GIN index), every
open keeps it current without rewriting it, player text never raises in websearch_to_tsquery,
and through the real server a question on a PostgreSQL world gets its lore, logged.

Run with a throwaway server: `bash .ci/postgres uv run pytest tests/npc/test_lore_postgres.py`
(without one these tests skip, except under CI=true).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from lore_support import Player, logged_contexts, serving_lore, stored_session

from pg_support import pg_execute
from starharness.npc import Lore, LoreEntry
from starharness.npc.lore import (
    COMMON_MATCHES,
    SearchesLore,
    install_lore,
    lore_lines,
    query_for,
    search_lore,
)
from starharness.runtime.session.postgres import PostgresTarget
from starharness.voyage import VoyageWorld, open_server_world
from starharness.voyage.content import DOCK_MASTER, PLAYER_ID, SMUGGLER
from starharness.voyage.content.lore import ENTRIES, LORE

_BY_ID = {entry.id: entry for entry in ENTRIES}


@pytest.fixture
def world(pg_target: PostgresTarget) -> Iterator[VoyageWorld]:
    with open_server_world(pg_target) as opened:
        yield opened


def _found(world: VoyageWorld, npc_id: str, said: str) -> list[str]:
    query = query_for(LORE, npc_id, said)
    return [] if query is None else [entry.id for entry in world.search_lore(query)]


def test_the_world_in_postgresql_searches_its_own_lore(world: VoyageWorld) -> None:
    assert isinstance(world, SearchesLore)
    # English stemming: "routes" and "patrolling" find "route" and "patrols".
    assert _found(world, SMUGGLER, "any navy patrolling on the routes?")[0] == "route-navy-patrols"
    assert "smugglers-lower-locks" in _found(world, SMUGGLER, "the lower locks")
    assert "smugglers-lower-locks" not in _found(world, DOCK_MASTER, "the lower locks")
    assert "vex-debt" not in _found(world, SMUGGLER, "Vex owes a debt")


def test_reopening_keeps_the_lore_without_rewriting_it(pg_target: PostgresTarget) -> None:
    open_server_world(pg_target).close()
    pg_execute(pg_target, "UPDATE voyage.lore_index SET body = body || ' (kept)'")
    with open_server_world(pg_target) as world:
        query = query_for(LORE, SMUGGLER, "pirate bay")
        assert query is not None
        assert world.search_lore(query)[0].text.endswith("(kept)")
    # A changed declaration (another digest) is written again on the next open.
    pg_execute(pg_target, "UPDATE voyage.lore_digest SET digest = 'older'")
    with open_server_world(pg_target) as world:
        query = query_for(LORE, SMUGGLER, "pirate bay")
        assert query is not None
        assert world.search_lore(query)[0].text == _BY_ID["kessler-hollow"].text


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(said=st.text())
@example(said='"unclosed -not or OR & | ! <-> :* (a')
@example(said="or or OR")
@example(said="\u0301 Ω 中文 é _")
def test_no_player_text_raises_in_postgresql(world: VoyageWorld, said: str) -> None:
    query = query_for(LORE, SMUGGLER, said)
    if query is not None:
        found = world.search_lore(query)
        assert {entry.knower for entry in found} <= set(query.knowers)


async def test_a_question_on_a_postgresql_world_gets_its_lore_logged(
    tmp_path: Path, pg_target: PostgresTarget
) -> None:
    async with (
        serving_lore(tmp_path, world=pg_target.url, password_env=pg_target.password_env) as stack,
        Player(stack.running.ws_url, PLAYER_ID) as me,
    ):
        assert isinstance(stack.running.server.world, SearchesLore)
        await me.meet("e1", SMUGGLER)
        session_id = stack.running.server.encounters[0].session_id
        await me.say("e1", "Tell me about the lower locks of the ring")
        await me.close("e1")
    stored = await stored_session(stack.sessions, session_id)
    assert _BY_ID["smugglers-lower-locks"].text in lore_lines(logged_contexts(stored)[-1])


class _Driver:
    """`LoreDriver` over one psycopg connection in autocommit (`?` placeholders as `%s`)."""

    dialect: Literal["postgresql"] = "postgresql"

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cursor = self.conn.execute(sql.replace("?", "%s").encode(), tuple(params) or None)
        return list(cursor.fetchall()) if cursor.description else []

    def many(self, sql: str, seq: Iterable[Sequence[Any]]) -> None:
        with self.conn.cursor() as cursor:
            cursor.executemany(sql.replace("?", "%s").encode(), [tuple(p) for p in seq])


def test_common_words_are_not_ranked_beside_rarer_ones_in_postgresql(
    pg_target: PostgresTarget,
) -> None:
    crowd = [LoreEntry(f"dock-{n}", f"Dock {n} of the station is busy.") for n in range(120)]
    hollow = LoreEntry("hollow", "The station's ships avoid the Hollow.", ("hollow",))
    lore = Lore((*crowd, hollow))
    with pg_target.connect(autocommit=True) as conn:
        driver = _Driver(conn)
        driver.rows("CREATE SCHEMA lore_test")
        driver.rows("SET search_path TO lore_test")
        with conn.transaction():
            assert install_lore(driver, lore)
        assert len(crowd) > COMMON_MATCHES
        query = query_for(lore, "n", "the station and the hollow")
        assert query is not None
        assert [e.id for e in search_lore(driver, query)] == ["hollow"]
        query = query_for(lore, "n", "busy station")
        assert query is not None
        found = search_lore(driver, query)
        assert found and all("busy" in e.text and "station" in e.text for e in found)
