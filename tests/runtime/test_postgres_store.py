"""PostgresStore's own checks: the store's identity and schema version in the database, a lost
connection, concurrent first opens. The shared contract runs in test_sqlite_store*.py."""

from __future__ import annotations

import asyncio
import sys
import textwrap

import pytest
from pydantic import ValidationError

from pg_support import pg_execute
from starharness.runtime.kernel import Context
from starharness.runtime.session import (
    SESSIONS,
    SessionsConfig,
    SessionService,
    SessionsPlugin,
    StoreFormatError,
    StoreWriteError,
)
from starharness.runtime.session import event_types as ev
from starharness.runtime.session.postgres import (
    APPLICATION,
    NAMESPACE,
    SCHEMA_VERSION,
    PostgresStore,
    PostgresTarget,
)
from store_support import CHILD_OPEN, StorePlace

_FOREVER = 3600.0


async def test_a_new_database_gets_the_store_and_its_identity(pg_target: PostgresTarget) -> None:
    store = await PostgresStore.open(pg_target)
    await store.aclose()
    assert pg_execute(pg_target, f"SELECT application, version FROM {NAMESPACE}.identity") == [
        (APPLICATION, SCHEMA_VERSION)
    ]
    tables = pg_execute(
        pg_target,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s"
        " ORDER BY table_name",
        NAMESPACE,
    )
    assert tables == [("events",), ("identity",), ("sessions",)]


@pytest.mark.parametrize(
    ("version", "message"),
    [(SCHEMA_VERSION + 1, "newer star-harness"), (0, "cannot read")],
)
async def test_another_schema_version_is_refused_untouched(
    pg_target: PostgresTarget, version: int, message: str
) -> None:
    service = SessionService(await PostgresStore.open(pg_target))
    service.create("kept").append("x/y", {})
    await service.aclose()
    pg_execute(pg_target, f"UPDATE {NAMESPACE}.identity SET version = %s", version)
    with pytest.raises(StoreFormatError, match=message):
        await PostgresStore.open(pg_target)
    assert pg_execute(pg_target, f"SELECT count(*) FROM {NAMESPACE}.events") == [(1,)]
    assert pg_execute(pg_target, f"SELECT version FROM {NAMESPACE}.identity") == [(version,)]


async def test_a_schema_of_another_application_is_refused(pg_target: PostgresTarget) -> None:
    pg_execute(pg_target, f"CREATE SCHEMA {NAMESPACE}")
    pg_execute(pg_target, f"CREATE TABLE {NAMESPACE}.events (x int)")
    with pytest.raises(StoreFormatError, match="not a star-harness session store"):
        await PostgresStore.open(pg_target)
    assert pg_execute(pg_target, f"SELECT to_regclass('{NAMESPACE}.sessions')") == [(None,)]


async def test_an_identity_of_another_application_is_refused(pg_target: PostgresTarget) -> None:
    await (await PostgresStore.open(pg_target)).aclose()
    pg_execute(pg_target, f"UPDATE {NAMESPACE}.identity SET application = 'someone else'")
    with pytest.raises(StoreFormatError, match="another application"):
        await PostgresStore.open(pg_target)


async def test_processes_opening_a_new_database_at_once_all_succeed(
    pg_target: PostgresTarget,
) -> None:
    stores = await asyncio.gather(*(PostgresStore.open(pg_target) for _ in range(4)))
    for store in stores:
        await store.aclose()
    assert pg_execute(pg_target, f"SELECT count(*) FROM {NAMESPACE}.identity") == [(1,)]


async def test_a_lost_connection_fails_the_flush_and_the_retry_writes(
    pg_target: PostgresTarget,
) -> None:
    store = await PostgresStore.open(pg_target, max_write_delay_s=_FOREVER)
    service = SessionService(store)
    session = service.create("a")
    session.append("x/y", {"n": 1})
    await service.flush()
    session.append("x/y", {"n": 2})
    # Every connection of the store goes (as in a server restart or a failover).
    pg_execute(
        pg_target,
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        " WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    with pytest.raises(StoreWriteError, match="write failed"):
        await service.flush()
    assert store.pending == 1
    await service.flush()  # reconnects
    assert store.pending == 0
    stored = await store.load("a")
    assert stored is not None and [e.data["n"] for e in stored.events] == [1, 2]
    await service.aclose()


def test_the_sessions_config_selects_postgresql_by_url() -> None:
    config = SessionsConfig.model_validate({"url": "postgresql://star@db/world"})
    assert config.store == "postgresql"
    with pytest.raises(ValidationError, match="password_env") as caught:
        SessionsConfig.model_validate({"url": "postgresql://star:hunter2@db/world"})
    assert "hunter2" not in str(caught.value)
    with pytest.raises(ValidationError, match="needs url"):
        SessionsConfig.model_validate({"store": "postgresql"})
    with pytest.raises(ValidationError, match='for store "postgresql"'):
        SessionsConfig.model_validate({"store": "sqlite", "url": "postgresql://star@db/world"})


async def test_the_plugin_provides_sessions_on_postgresql(pg_target: PostgresTarget) -> None:
    root = Context()
    config = SessionsConfig(url=pg_target.url, password_env=pg_target.password_env)
    await SessionsPlugin().setup(root.fork("sessions"), config)
    assert isinstance(root.get(SESSIONS).store, PostgresStore)
    root.get(SESSIONS).create("p").append(ev.USER_MESSAGE, {"content": "kept", "source": "user"})
    await root.dispose()
    store = await PostgresStore.open(pg_target)
    stored = await store.load("p")
    await store.aclose()
    assert stored is not None and [e.data["content"] for e in stored.events] == ["kept"]


_WORKER = CHILD_OPEN + textwrap.dedent(
    """
    import asyncio, sys
    from starharness.runtime.session import SessionService

    async def main(name: str, args: list[str]) -> None:
        service = SessionService(await open_from_argv(args, max_write_delay_s=0.001))
        sessions = [service.create(f"{name}-{n}", meta={"worker": name}) for n in range(5)]
        for i in range(300):
            for session in sessions:
                session.append("x/y", {"i": i, "by": name})
            if i % 30 == 0:
                await asyncio.sleep(0)  # let the writer thread take batches as they come
        await service.aclose()
        print("done", flush=True)

    asyncio.run(main(sys.argv[1], sys.argv[2:]))
    """
)


async def test_three_processes_share_one_store(pg_target: PostgresTarget) -> None:
    place = StorePlace("postgresql", target=pg_target)
    await (await place.open()).aclose()  # the schema exists before the workers race
    workers = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-c", _WORKER, name, *place.locator(), stdout=asyncio.subprocess.PIPE
        )
        for name in ("w1", "w2", "w3")
    ]
    outputs = await asyncio.gather(*(worker.communicate() for worker in workers))
    assert [worker.returncode for worker in workers] == [0, 0, 0]
    assert all(out == b"done\n" for out, _ in outputs)

    # Any process reads what every worker wrote: a player's transcript is there wherever
    # they reconnect.
    service = SessionService(await place.open())
    listed = await service.stored()
    assert sorted(info.id for info in listed) == sorted(
        f"{w}-{n}" for w in ("w1", "w2", "w3") for n in range(5)
    )
    for info in listed:
        session = await service.resume(info.id)
        assert [e.seq for e in session.events] == list(range(300))
        assert {e.data["by"] for e in session.events} == {info.meta["worker"]}
    await service.aclose()
    # Batch numbers come from one sequence, so no two processes' transactions share one.
    shared = pg_execute(
        pg_target,
        f"SELECT batch FROM {NAMESPACE}.events GROUP BY batch"
        " HAVING count(DISTINCT split_part(session_id, '-', 1)) > 1",
    )
    assert shared == []
