"""Project paths as the editor wants them: `res://`-relative, never outside the project."""

from __future__ import annotations

import re
from typing import Annotated, Final

from pydantic import AfterValidator, StringConstraints

from ..protocol.hygiene import MAX_STRING_CHARS

RES_PREFIX: Final = "res://"
_DRIVE: Final = re.compile(r"^[A-Za-z]:")
_SCHEME: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def to_res_path(value: str, *, allow_root: bool = False) -> str:
    """Normalize to `res://a/b`; a relative path gets the prefix, anything else is refused."""
    text = value.strip()
    if text.startswith(RES_PREFIX):
        rest = text[len(RES_PREFIX) :]
    elif _SCHEME.match(text):
        raise ValueError(f"{text!r} must be a res:// path (other schemes are not accepted)")
    elif text.startswith(("/", "\\")) or _DRIVE.match(text):
        raise ValueError(f"{text!r} must be res:// relative, not an absolute filesystem path")
    else:
        rest = text
    parts = rest.replace("\\", "/").split("/")
    if ".." in parts:
        raise ValueError(f"{text!r} must stay inside the project ('..' is not allowed)")
    normalized = "/".join(part for part in parts if part not in ("", "."))
    if not normalized and not allow_root:
        raise ValueError("a file path is required, not the project root")
    return RES_PREFIX + normalized


def _file_path(value: str) -> str:
    return to_res_path(value)


def _folder_path(value: str) -> str:
    return to_res_path(value, allow_root=True)


ResPath = Annotated[str, StringConstraints(max_length=MAX_STRING_CHARS), AfterValidator(_file_path)]
ResFolder = Annotated[
    str, StringConstraints(max_length=MAX_STRING_CHARS), AfterValidator(_folder_path)
]
