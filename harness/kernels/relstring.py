"""trec_eval's ``relstring``: the labels of the top documents as one character each."""

from __future__ import annotations

import numpy as np

from harness.kernels._segments import RankedLists


def relstrings(lists: RankedLists, length: int = 10) -> list[str]:
    """``'0'``-``'9'`` a label, ``'>'`` above 9, ``'-'`` not pooled, ``'.'`` pooled but unjudged.

    >>> lists = RankedLists(offsets=np.array([0, 4, 4]), label=np.array([1.0, np.nan, 12.0, -1.0]),
    ...                     judged_offsets=np.array([0, 0, 0]), judged_label=np.array([]))
    >>> relstrings(lists)
    ['1->.', '']
    """
    label = lists.label
    chars = np.full(label.size, "<", dtype="<U1")
    digit = (label >= 0) & (label <= 9)
    chars[digit] = np.floor(label[digit]).astype(np.int64).astype(str)
    chars[label > 9] = ">"
    chars[np.isnan(label)] = "-"
    chars[label < 0] = "."
    top = lists.pos < length
    text = "".join(chars[top].tolist())
    shown = np.minimum(lists.n_ret, length)
    ends = np.cumsum(shown)
    starts = ends - shown
    return [text[s:e] for s, e in zip(starts.tolist(), ends.tolist(), strict=True)]
