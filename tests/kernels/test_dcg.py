"""IDCG from each query's k largest gains (the compiled ``largest_sums``) against the running sum of every sorted
gain read at k (``_ideal_cumulative``, which nDCGRel and RnDCG read), at a short list's length under ``short_lists:
truncate``: the same bits, for any data."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.kernels import dcg
from harness.kernels._segments import RankedLists
from harness.kernels.gains import GainScheme


@st.composite
def ranked_lists(draw: st.DrawFn) -> RankedLists:
    n_queries = draw(st.integers(1, 6))
    judged_counts = draw(st.lists(st.integers(0, 45), min_size=n_queries, max_size=n_queries))  # past 32: the sorted path too
    run_counts = draw(st.lists(st.integers(0, 15), min_size=n_queries, max_size=n_queries))
    level = st.sampled_from([-1.0, 0.0, 1.0, 2.0, 3.0, 0.5, 7.25])  # repeated gains, fractions, negatives
    judged = draw(st.lists(level, min_size=sum(judged_counts), max_size=sum(judged_counts)))
    retrieved = draw(st.lists(st.one_of(level, st.just(float("nan"))), min_size=sum(run_counts), max_size=sum(run_counts)))
    offsets = np.concatenate(([0], np.cumsum(run_counts))).astype(np.int64)
    judged_offsets = np.concatenate(([0], np.cumsum(judged_counts))).astype(np.int64)
    return RankedLists(
        offsets=offsets,
        label=np.array(retrieved, dtype=np.float64),
        judged_offsets=judged_offsets,
        judged_label=np.array(judged, dtype=np.float64),
        ideal_from_run=draw(st.booleans()),
        short_lists_truncate=draw(st.booleans()),
    )


@settings(max_examples=200, deadline=None)
@given(ranked_lists(), st.one_of(st.none(), st.integers(1, 40)), st.sampled_from(["linear", "exp"]))
def test_ideal_dcg_is_the_running_sum_at_k_bit_for_bit(lists: RankedLists, k: int | None, gain: str) -> None:
    scheme = GainScheme.linear() if gain == "linear" else GainScheme.exponential()
    offsets, running = dcg._ideal_cumulative(lists, scheme)
    rank = np.diff(offsets) if k is None else np.full(lists.n_queries, k, dtype=np.int64)
    if k is not None and lists.short_lists_truncate:  # a list shorter than k: its ideal cut at its length
        rank = np.minimum(rank, lists.n_ret)
    expected = dcg._at(offsets, running, rank)
    assert dcg.ideal_dcg(lists, k, scheme).tobytes() == expected.tobytes()


def test_ideal_dcg_by_hand() -> None:
    """Gains 3, 2, 1 and a 0 (left out): IDCG@2 = 3 + 2/log2(3); the whole ideal adds 1/log2(4) = 1/2."""
    lists = RankedLists(
        offsets=np.array([0, 1]),
        label=np.array([0.0]),
        judged_offsets=np.array([0, 4]),
        judged_label=np.array([1.0, 0.0, 3.0, 2.0]),
    )
    assert dcg.ideal_dcg(lists, 2, GainScheme.linear())[0] == 3 + 2 / np.log2(3)
    assert dcg.ideal_dcg(lists, None, GainScheme.linear())[0] == 3 + 2 / np.log2(3) + 0.5
