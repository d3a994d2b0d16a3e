"""Credentials by variable name: the environment, then ./.env, then the owner-only home file.

Config only ever holds the variable's name (e.g. `DEEPSEEK_API_KEY`); values are read when
needed and wrapped in `Secret`, whose repr and str never show them.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from pathlib import Path
from typing import Final, NoReturn, final

from .errors import UserFacingError
from .paths import star_harness_home

CREDENTIALS_FILE: Final = "credentials.env"
DOTENV_FILE: Final = ".env"

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}


class CredentialError(UserFacingError):
    """A credentials file is unsafe or malformed; the message never contains a value."""


@final
class Secret:
    """A credential value that does not leak through repr, str, format or logging."""

    __slots__ = ("_value", "name")

    def __init__(self, name: str, value: str) -> None:
        self.name = name
        self._value = value

    def reveal(self) -> str:
        """The value itself, for the one place that sends it (an HTTP header)."""
        return self._value

    def __repr__(self) -> str:
        return f"Secret({self.name!r})"

    def __str__(self) -> str:
        return f"<secret {self.name}>"

    def __format__(self, spec: str) -> str:
        return str(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other.name == self.name and other._value == self._value

    def __hash__(self) -> int:
        return hash((Secret, self.name))

    def __reduce__(self) -> NoReturn:
        raise TypeError("a Secret cannot be pickled")


def resolve_secret(name: str, *, cwd: Path | None = None, home: Path | None = None) -> str | None:
    """The value of variable `name`, or None when no source sets it (an empty value is unset).

    Looks in the environment, then `<cwd>/.env`, then `$STAR_HARNESS_HOME/credentials.env`,
    which is refused with CredentialError unless only its owner can read it.
    """
    _check_name(name)
    value = os.environ.get(name)
    if value:
        return value
    dotenv = (cwd if cwd is not None else Path.cwd()) / DOTENV_FILE
    if dotenv.is_file():
        value = read_env_file(dotenv).get(name)
        if value:
            return value
    private = (home if home is not None else star_harness_home()) / CREDENTIALS_FILE
    if private.is_file():
        check_owner_only(private)
        value = read_env_file(private).get(name)
        if value:
            return value
    return None


def get_secret(name: str, *, cwd: Path | None = None, home: Path | None = None) -> Secret | None:
    """`resolve_secret` wrapped in a Secret."""
    value = resolve_secret(name, cwd=cwd, home=home)
    return None if value is None else Secret(name, value)


async def aget_secret(
    name: str, *, cwd: Path | None = None, home: Path | None = None
) -> Secret | None:
    """`get_secret` in a thread, for use inside the event loop (it reads files)."""
    return await asyncio.to_thread(get_secret, name, cwd=cwd, home=home)


def check_owner_only(path: Path) -> None:
    """Refuse a credentials file that users other than its owner may read or write."""
    if os.name == "nt":
        return
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise CredentialError(
            f"{path} may be read by other users (mode {mode:o}); "
            f"make it owner-only with: chmod 600 {path}"
        )


def create_owner_only(path: Path) -> None:
    """Create `path` empty with mode 0600 unless it exists (a new database file: SQLite gives
    its -wal and -shm files the database's mode, so they are owner-only too)."""
    if os.name == "nt" or str(path) in ("", ":memory:"):
        return
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    os.close(descriptor)


def read_env_file(path: Path) -> dict[str, str]:
    """Parse a dotenv file: `NAME=value` lines, `export` prefix, quotes and `#` comments."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CredentialError(f"{path} is not UTF-8 text") from None
    return parse_env(text, str(path))


def parse_env(text: str, source: str = "<env>") -> dict[str, str]:
    """Parse dotenv text; a bad line is a CredentialError naming the line, never its content."""
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        name, sep, rest = line.partition("=")
        name = name.strip()
        if not sep or not _NAME.fullmatch(name):
            raise CredentialError(f"{source}: line {number} is not of the form NAME=value")
        value = _parse_value(rest.strip())
        if value is None:
            raise CredentialError(
                f"{source}: line {number} has a quoted value that is unterminated "
                "or followed by text"
            )
        values[name] = value
    return values


def _parse_value(text: str) -> str | None:
    if text.startswith("'"):
        end = text.find("'", 1)
        if end < 0 or not _only_comment(text[end + 1 :]):
            return None
        return text[1:end]
    if text.startswith('"'):
        return _parse_double_quoted(text)
    hash_at = text.find(" #")
    return (text[:hash_at] if hash_at >= 0 else text).strip()


def _parse_double_quoted(text: str) -> str | None:
    out: list[str] = []
    index = 1
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text):
            following = text[index + 1]
            out.append(_ESCAPES.get(following, "\\" + following))
            index += 2
            continue
        if char == '"':
            return "".join(out) if _only_comment(text[index + 1 :]) else None
        out.append(char)
        index += 1
    return None


def _only_comment(rest: str) -> bool:
    rest = rest.strip()
    return not rest or rest.startswith("#")


def _check_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        # Do not echo it: a key pasted where a variable name belongs must not reach a log.
        raise ValueError(
            "a credential is named by an environment variable such as DEEPSEEK_API_KEY; "
            f"got a {len(name)}-character string that is not a variable name"
        )
