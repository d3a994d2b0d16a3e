"""Credentials: environment, then ./.env, then the owner-only home file; values never leak."""

from __future__ import annotations

import logging
import os
import pickle
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from starharness.runtime.credentials import (
    CredentialError,
    Secret,
    aget_secret,
    get_secret,
    parse_env,
    resolve_secret,
)

NAME = "STAR_HARNESS_TEST_KEY"


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """An empty working directory and home, with the test variable unset."""
    cwd = tmp_path / "cwd"
    home = tmp_path / "home"
    cwd.mkdir()
    home.mkdir()
    monkeypatch.delenv(NAME, raising=False)
    return cwd, home


def write_private(home: Path, text: str, mode: int = 0o600) -> Path:
    path = home / "credentials.env"
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def test_precedence_environment_then_dotenv_then_home(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd, home = places
    assert resolve_secret(NAME, cwd=cwd, home=home) is None

    write_private(home, f"{NAME}=from-home\n")
    assert resolve_secret(NAME, cwd=cwd, home=home) == "from-home"

    (cwd / ".env").write_text(f"{NAME}=from-dotenv\n", encoding="utf-8")
    assert resolve_secret(NAME, cwd=cwd, home=home) == "from-dotenv"

    monkeypatch.setenv(NAME, "from-env")
    assert resolve_secret(NAME, cwd=cwd, home=home) == "from-env"


def test_empty_values_count_as_unset(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd, home = places
    monkeypatch.setenv(NAME, "")
    (cwd / ".env").write_text(f"{NAME}=\n", encoding="utf-8")
    write_private(home, f"{NAME}=from-home\n")
    assert resolve_secret(NAME, cwd=cwd, home=home) == "from-home"


def test_defaults_are_the_working_directory_and_star_harness_home(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd, home = places
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("STAR_HARNESS_HOME", str(home))
    write_private(home, f"{NAME}=home-default\n")
    assert resolve_secret(NAME) == "home-default"
    (cwd / ".env").write_text(f"export {NAME}='cwd default'\n", encoding="utf-8")
    assert resolve_secret(NAME) == "cwd default"


@pytest.mark.skipif(os.name == "nt", reason="POSIX permissions")
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o602])
def test_a_home_file_others_can_access_is_refused(places: tuple[Path, Path], mode: int) -> None:
    cwd, home = places
    path = write_private(home, f"{NAME}=sk-refused-value\n", mode)
    with pytest.raises(CredentialError) as caught:
        resolve_secret(NAME, cwd=cwd, home=home)
    message = str(caught.value)
    assert str(path) in message
    assert f"chmod 600 {path}" in message
    assert "sk-refused-value" not in message


@pytest.mark.skipif(os.name == "nt", reason="POSIX permissions")
def test_the_home_file_is_not_read_when_an_earlier_source_answers(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd, home = places
    write_private(home, f"{NAME}=x\n", 0o644)
    monkeypatch.setenv(NAME, "from-env")
    assert resolve_secret(NAME, cwd=cwd, home=home) == "from-env"


def test_secret_never_shows_its_value(
    places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    cwd, home = places
    value = "sk-live-0123456789abcdef"
    monkeypatch.setenv(NAME, value)
    secret = get_secret(NAME, cwd=cwd, home=home)
    assert secret is not None
    assert secret.reveal() == value
    with caplog.at_level(logging.INFO):
        logging.getLogger("test").info("key %s %r", secret, secret)
    shown = [
        repr(secret),
        str(secret),
        f"{secret}",
        f"{secret!r:>40}",
        f"{secret:>10}",
        caplog.text,
    ]
    assert all(value not in text for text in shown)
    assert NAME in repr(secret)
    with pytest.raises(TypeError):
        pickle.dumps(secret)
    assert secret == Secret(NAME, value)
    assert secret != Secret(NAME, "other")


async def test_async_lookup(places: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    cwd, home = places
    monkeypatch.setenv(NAME, "async-value")
    secret = await aget_secret(NAME, cwd=cwd, home=home)
    assert secret is not None and secret.reveal() == "async-value"
    assert await aget_secret("STAR_HARNESS_ABSENT_KEY", cwd=cwd, home=home) is None


def test_names_must_be_variable_names_and_are_not_echoed(places: tuple[Path, Path]) -> None:
    cwd, home = places
    pasted = "sk-0123-this-is-a-key"
    with pytest.raises(ValueError) as caught:
        resolve_secret(pasted, cwd=cwd, home=home)
    assert pasted not in str(caught.value)


def test_dotenv_syntax() -> None:
    text = (
        "# comment\n"
        "\n"
        "PLAIN=value # trailing comment\n"
        "export EXPORTED = spaced \n"
        "SINGLE='keep # and \\n as is'\n"
        'DOUBLE="line\\nbreak \\"quoted\\"" # comment\n'
        "HASH=a#b\n"
        "EMPTY=\n"
        "PLAIN=later wins\n"
    )
    assert parse_env(text) == {
        "PLAIN": "later wins",
        "EXPORTED": "spaced",
        "SINGLE": "keep # and \\n as is",
        "DOUBLE": 'line\nbreak "quoted"',
        "HASH": "a#b",
        "EMPTY": "",
    }


@pytest.mark.parametrize(
    "line",
    ["just-a-value-sk-123", "1BAD=sk-123", "KEY='sk-123", 'KEY="sk-123', 'KEY="sk-1" tail'],
)
def test_bad_dotenv_lines_name_the_line_not_the_content(line: str) -> None:
    with pytest.raises(CredentialError) as caught:
        parse_env(f"OK=1\n{line}\n", "some.env")
    message = str(caught.value)
    assert message.startswith("some.env: line 2 ")
    assert "sk-1" not in message


_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,15}", fullmatch=True)
_values = st.text(
    st.characters(
        blacklist_categories=("Cs",),
        blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029",
    ),
    max_size=30,
)


def _double_quoted(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


@given(st.dictionaries(_names, _values, max_size=6))
def test_double_quoted_values_round_trip(values: dict[str, str]) -> None:
    text = "".join(f"{name}={_double_quoted(value)}\n" for name, value in values.items())
    assert parse_env(text) == values


@given(
    st.dictionaries(
        _names,
        st.from_regex(
            r"[A-Za-z0-9_\-./:+=@]([A-Za-z0-9_\-./:+=@#]*[A-Za-z0-9_\-./:+=@])?", fullmatch=True
        ),
        max_size=6,
    )
)
def test_unquoted_values_round_trip(values: dict[str, str]) -> None:
    text = "".join(f"export {name}={value}  # note\n" for name, value in values.items())
    assert parse_env(text) == values
