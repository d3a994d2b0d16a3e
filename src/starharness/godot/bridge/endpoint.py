"""The endpoint file that pairs the bridge with the addon: where to connect and the token."""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError, field_validator

HOME_ENV: Final = "STAR_HARNESS_HOME"
ENDPOINT_VERSION: Final = 1
LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost"})
TOKEN_PATTERN: Final = re.compile(r"^[0-9a-fA-F]{32}$")
_FILE_MODE: Final = 0o600
_DIR_MODE: Final = 0o700


def default_home() -> Path:
    """`$STAR_HARNESS_HOME`, else `~/.star-harness` (the addon computes the same path)."""
    configured = os.environ.get(HOME_ENV, "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".star-harness"


def endpoint_path(home: Path) -> Path:
    """Where the endpoint file lives under a harness home."""
    return home / "godot" / "endpoint.json"


def new_token() -> str:
    """A fresh 32-hex shared secret."""
    return secrets.token_hex(16)


class EndpointFile(BaseModel):
    """`{host, port, token, version, updatedAt, pid}`; `pid` names the bridge process."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    host: str = "127.0.0.1"
    port: StrictInt = Field(ge=1, le=65_535)
    token: str = Field(pattern=TOKEN_PATTERN.pattern)
    version: StrictInt = ENDPOINT_VERSION
    updated_at: str = Field(default="", alias="updatedAt")
    pid: StrictInt | None = None

    @field_validator("host")
    @classmethod
    def _loopback_only(cls, host: str) -> str:
        if host not in LOOPBACK_HOSTS:
            raise ValueError(f"host {host!r} is not loopback; only 127.0.0.1 or localhost")
        return host

    def to_json(self) -> str:
        """The file's text, with camelCase keys as the addon reads them."""
        return json.dumps(self.model_dump(by_alias=True), indent=2) + "\n"


@dataclass(frozen=True, slots=True)
class EndpointReading:
    """What was found at the endpoint path: a valid file, a problem, or nothing."""

    endpoint: EndpointFile | None
    problem: str | None = None


def read_endpoint(path: Path) -> EndpointReading:
    """Read and validate the endpoint file (blocking; call it from a worker thread)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return EndpointReading(None)
    except OSError as exc:
        return EndpointReading(None, f"unreadable: {exc.strerror or exc}")
    try:
        return EndpointReading(EndpointFile.model_validate_json(text))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "file"
        return EndpointReading(None, f"invalid: {where}: {first['msg']}")


def build_endpoint(host: str, port: int, token: str, pid: int) -> EndpointFile:
    """An endpoint stamped with the current UTC time."""
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return EndpointFile(host=host, port=port, token=token, updatedAt=stamp, pid=pid)


def write_endpoint(path: Path, endpoint: EndpointFile) -> None:
    """Write atomically (temp file + replace), owner-only (blocking; use a worker thread)."""
    folder = path.parent
    folder.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
    if os.name == "posix":
        folder.chmod(_DIR_MODE)
    temp = folder / f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _FILE_MODE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(endpoint.to_json())
            handle.flush()
            os.fsync(handle.fileno())
        temp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
