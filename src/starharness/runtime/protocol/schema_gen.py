"""Write the protocol's generated files.

python -m starharness.runtime.protocol.schema_gen OUT            # the JSON Schema
python -m starharness.runtime.protocol.schema_gen --reference OUT  # the markdown reference
"""

from __future__ import annotations

import sys
from pathlib import Path

from .reference import reference_text
from .schema import schema_text


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--reference":
        Path(argv[1]).write_text(reference_text(), encoding="utf-8")
        return 0
    if len(argv) != 1:
        sys.stderr.write(
            "usage: python -m starharness.runtime.protocol.schema_gen [--reference] OUT\n"
        )
        return 2
    Path(argv[0]).write_text(schema_text(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
