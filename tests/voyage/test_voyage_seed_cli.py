"""`star-harness seed [--world PATH]` through a tiny Typer app."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from starharness.cli import seed as seed_command
from starharness.cli._errors import CliError
from starharness.voyage import open_world
from starharness.voyage.content import PLAYER_ID


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def root() -> None:  # keeps `seed` a subcommand
        pass

    seed_command.register(app)
    return app


def test_seed_creates_and_rebuilds_a_world(app: typer.Typer, tmp_path: Path) -> None:
    path = tmp_path / "sub" / "world.db"
    result = CliRunner().invoke(app, ["seed", "--world", str(path)])
    assert result.exit_code == 0, result.output
    assert str(path) in result.output
    with open_world(path) as world, world.transaction() as tx:
        tx.add_credits(PLAYER_ID, -5_000)
    result = CliRunner().invoke(app, ["seed", "--world", str(path)])
    assert result.exit_code == 0, result.output
    with open_world(path) as world:
        assert world.player_view(PLAYER_ID)["credits"] == 12_000


def test_seed_uses_the_default_path(
    app: typer.Typer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STAR_HARNESS_HOME", str(tmp_path))
    result = CliRunner().invoke(app, ["seed"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "voyage" / "world.db").is_file()


def test_seed_refuses_a_foreign_file(app: typer.Typer, tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE mine (x INTEGER)")
    conn.commit()
    conn.close()
    result = CliRunner().invoke(app, ["seed", "--world", str(path)])
    assert isinstance(result.exception, CliError)
    assert "not an Omega station world" in str(result.exception)
