"""``python -m harness``."""

import sys

from harness.cli import main

if __name__ == "__main__":  # the dask engine's worker processes import this module again: they must not run it
    sys.exit(main())
