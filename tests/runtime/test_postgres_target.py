"""PostgresTarget: the URL never carries the password; the variable that holds it is read when
connecting; messages name host, port and database only."""

from __future__ import annotations

import pytest

from pg_support import pg_execute
from starharness.runtime.session import StoreError
from starharness.runtime.session.postgres import PostgresTarget, is_postgres_url


def test_a_password_in_the_url_is_refused_without_repeating_it() -> None:
    with pytest.raises(ValueError, match="password_env") as caught:
        PostgresTarget("postgresql://star:hunter2@db.example:5432/world")
    assert "hunter2" not in str(caught.value)
    with pytest.raises(ValueError, match="password_env"):
        PostgresTarget("postgresql://star@db.example/world?password=hunter2")


def test_describe_and_repr_show_no_user_or_password() -> None:
    target = PostgresTarget("postgresql://star@db.example:6543/world", password_env="PG_PASS")
    assert target.describe() == "postgresql://db.example:6543/world"
    assert "star@" not in repr(target) and "PG_PASS" in repr(target)
    assert is_postgres_url("postgres://h/d") and not is_postgres_url("/tmp/world.db")
    with pytest.raises(ValueError, match="postgresql:// URL"):
        PostgresTarget("/tmp/world.db")


def test_the_test_server_answers_a_query(pg_target: PostgresTarget) -> None:
    assert pg_execute(pg_target, "SELECT 40 + 2") == [(42,)]


def test_an_unset_password_variable_is_named(
    pg_target: PostgresTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STAR_HARNESS_NO_SUCH_PASSWORD", raising=False)
    target = PostgresTarget(pg_target.url, password_env="STAR_HARNESS_NO_SUCH_PASSWORD")
    with pytest.raises(StoreError, match="STAR_HARNESS_NO_SUCH_PASSWORD is not set"):
        target.connect()


def test_a_wrong_password_fails_without_showing_it(
    pg_target: PostgresTarget, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STAR_HARNESS_WRONG_PASSWORD", "not-the-password-4711")
    target = PostgresTarget(pg_target.url, password_env="STAR_HARNESS_WRONG_PASSWORD")
    with pytest.raises(StoreError, match=r"cannot connect to postgresql://127\.0\.0\.1") as caught:
        target.connect()
    assert "4711" not in str(caught.value)


def test_every_connection_finds_a_vanished_peer_unless_the_url_says_otherwise(
    pg_target: PostgresTarget,
) -> None:
    with pg_target.connect() as conn:
        used = conn.info.get_parameters()
    assert used["keepalives_idle"] == "30" and used["tcp_user_timeout"] == "60000", used
    assert used["connect_timeout"] == "10", used
    separator = "&" if "?" in pg_target.url else "?"
    tuned = PostgresTarget(
        f"{pg_target.url}{separator}keepalives_idle=7&connect_timeout=3",
        password_env=pg_target.password_env,
    )
    with tuned.connect() as conn:
        used = conn.info.get_parameters()
    assert (used["keepalives_idle"], used["connect_timeout"]) == ("7", "3"), used
    assert used["keepalives_count"] == "3", used
