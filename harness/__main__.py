"""``python -m harness``."""

from harness.cli import main_entry

if __name__ == "__main__":  # the dask engine's worker processes import this module again: they must not run it
    main_entry()
