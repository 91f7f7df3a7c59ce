"""The comparisons as a notebook shows them: a pandas DataFrame of every column, displayed compactly.

:func:`harness.compare` returns a :class:`ComparisonTable`: a DataFrame with every column the comparisons table has
(48: each test's p, each interval, the plan), shown as the few a reader looks at first (the measure, the pair, both
means, the difference and its interval, the corrected p and whether it is significant). ``.full`` is the same table
as a plain DataFrame, shown whole; any selection or operation on it gives a plain DataFrame too.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

# what the compact view shows, in order: the segment only where there are several
SHOWN = ("segment", "measure", "system_a", "system_b", "mean_a", "mean_b", "delta", "ci_low", "ci_high", "p_adj", "significant")


class ComparisonTable(pd.DataFrame):
    """Every comparison column, displayed as the compact view (:data:`SHOWN`); ``.full`` is the plain DataFrame.

    >>> table = ComparisonTable(pd.DataFrame({"segment": ["all"], "measure": ["AP"], "system_a": ["a"],
    ...     "system_b": ["b"], "mean_a": [0.5], "mean_b": [0.6], "delta": [0.1], "ci_low": [0.05], "ci_high": [0.15],
    ...     "p_adj": [0.001], "significant": [True], "p_t": [0.0008]}))
    >>> list(table.compact().columns)
    ['measure', 'system_a', 'system_b', 'mean_a', 'mean_b', 'delta', 'ci_low', 'ci_high', 'p_adj', 'significant']
    >>> type(table[["measure", "p_t"]]).__name__, len(table.full.columns)
    ('DataFrame', 12)
    """

    @property
    def _constructor(self) -> Any:  # a selection or operation gives a plain DataFrame, shown whole
        return pd.DataFrame

    @property
    def full(self) -> pd.DataFrame:
        """Every column, as a plain DataFrame."""
        return pd.DataFrame(self)

    def compact(self) -> pd.DataFrame:
        """The columns a reader looks at first (the segment only where there are several)."""
        shown = [c for c in SHOWN if c in self.columns and (c != "segment" or self["segment"].nunique() > 1)]
        return pd.DataFrame(self)[shown]

    def __repr__(self) -> str:
        hidden = len(self.columns) - len(self.compact().columns)
        return f"{self.compact()!r}\n({hidden} more columns: .full shows every one)"

    def _repr_html_(self) -> str | None:
        compact = self.compact()
        html = compact.to_html(max_rows=60, show_dimensions=len(compact) > 60)
        return f"{html}<p>{len(self.columns) - len(compact.columns)} more columns: <code>.full</code> shows every one</p>"


__all__ = ["SHOWN", "ComparisonTable"]
