"""`python -m starharness.cli`, the same as the `star-harness` script."""

from starharness.cli import main

main()
