"""Optional packages: whether they are here, and what to say when they are not."""

from __future__ import annotations

import importlib.util


def missing_dask() -> str | None:
    """Why the dask engine cannot run here (its extra is not installed), or None."""
    for module in ("dask", "distributed", "dask.dataframe"):
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            return f"the dask engine needs the optional packages dask and distributed ({module.split('.')[0]} is not installed)"
    return None
