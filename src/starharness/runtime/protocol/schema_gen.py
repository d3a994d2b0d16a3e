"""Write the protocol's generated files.

python -m starharness.runtime.protocol.schema_gen OUT            # the JSON Schema
python -m starharness.runtime.protocol.schema_gen --reference OUT  # the markdown reference

With `--check`, nothing is written: exit 1 with a diff when OUT is not a fresh generation.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .reference import reference_text
from .schema import schema_text


def main(argv: list[str]) -> int:
    check = "--check" in argv
    reference = "--reference" in argv
    rest = [arg for arg in argv if arg not in ("--check", "--reference")]
    if len(rest) != 1 or rest[0].startswith("-"):
        sys.stderr.write(
            "usage: python -m starharness.runtime.protocol.schema_gen [--reference] [--check] OUT\n"
        )
        return 2
    out = Path(rest[0])
    text = reference_text() if reference else schema_text()
    if check:
        from ..generated import check_generated, read_or_none

        regenerate = "uv run python -m starharness.runtime.protocol.schema_gen " + (
            f"--reference {out}" if reference else str(out)
        )
        return check_generated(out, text, read_or_none(out), regenerate)
    out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
