"""`python -m starharness.cli`, the same as the `star-harness` script."""

from . import main

main()
