"""Write the protocol schema: `python -m starharness.runtime.protocol.schema_gen OUT`."""

from __future__ import annotations

import sys
from pathlib import Path

from starharness.runtime.protocol.schema import schema_text


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m starharness.runtime.protocol.schema_gen OUT\n")
        return 2
    Path(argv[0]).write_text(schema_text(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
