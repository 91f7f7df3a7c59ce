"""The compiled per-query passes of the accuracy measures (``_ranked_compiled``) against the numpy each replaced: the
same bits for any labels (NaN, negative, fractional, repeated), any cutoff, empty lists, and any split of the queries
between threads."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.kernels import _ranked_compiled as ranked
from harness.kernels._segments import PARALLEL_FROM_ROWS, RankedLists, discount

_LABELS = st.sampled_from([0.0, 1.0, 2.0, 3.0, -1.0, 0.5, float("nan")])
_LEVELS = st.sampled_from([1.0, 0.5, 2.0, 0.0])
_CUTOFFS = st.one_of(st.none(), st.integers(1, 12))


@st.composite
def lists_of_labels(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """(offsets, labels): a few queries' ranked labels, empty queries included."""
    lengths = draw(st.lists(st.integers(0, 14), min_size=1, max_size=7))
    labels = draw(st.lists(_LABELS, min_size=sum(lengths), max_size=sum(lengths)))
    return np.concatenate(([0], np.cumsum(lengths))).astype(np.int64), np.array(labels, dtype=np.float64)


def _splits(n: int) -> list[list[tuple[int, int]]]:
    """One pass over the n queries, and two threads' ranges cut at every place."""
    return [[(0, n)]] + [[(0, cut), (cut, n)] for cut in range(1, n)]


def _numpy_ap_numerator(offsets: np.ndarray, label: np.ndarray, level: float, k: int | None) -> np.ndarray:
    """What average_precision summed before: the relevant rows, their ordinals over their ranks, a weighted bincount."""
    rows = np.flatnonzero(label >= level)
    q = np.searchsorted(offsets, rows, side="right") - 1
    rank = rows - offsets[q] + 1
    if k is not None:
        rows, q, rank = rows[rank <= k], q[rank <= k], rank[rank <= k]
    ordinal = np.arange(1, rows.size + 1) - np.searchsorted(q, q, side="left")
    return np.bincount(q, weights=ordinal / rank.astype(np.float64), minlength=offsets.size - 1).astype(np.float64)


@settings(max_examples=300, deadline=None)
@given(lists_of_labels(), _LEVELS, _CUTOFFS)
def test_precision_sums_are_aps_weighted_bincount_bit_for_bit(
    case: tuple[np.ndarray, np.ndarray], level: float, k: int | None
) -> None:
    offsets, label = case
    expected = _numpy_ap_numerator(offsets, label, level, k)
    for ranges in _splits(offsets.size - 1):
        got = np.full(offsets.size - 1, np.nan)
        for lo, hi in ranges:
            ranked.precision_sums(offsets, label, level, -1 if k is None else k, got, lo, hi)
        assert got.tobytes() == expected.tobytes()


@settings(max_examples=300, deadline=None)
@given(lists_of_labels(), _LEVELS)
def test_first_hits_are_the_first_relevant_ranks(case: tuple[np.ndarray, np.ndarray], level: float) -> None:
    offsets, label = case
    expected = [next((i + 1 for i, v in enumerate(label[a:b]) if v >= level), 0) for a, b in itertools.pairwise(offsets)]
    for ranges in _splits(offsets.size - 1):
        got = np.full(offsets.size - 1, -7, dtype=np.int64)
        for lo, hi in ranges:
            ranked.first_hits(offsets, label, level, got, lo, hi)
        assert got.tolist() == expected


@settings(max_examples=300, deadline=None)
@given(lists_of_labels(), _LEVELS, _CUTOFFS)
def test_head_counts_are_the_heads_counted(case: tuple[np.ndarray, np.ndarray], level: float, k: int | None) -> None:
    """P@k's and R@k's numerator: what the head's mask, bincounted by query, gave."""
    offsets, label = case
    lengths = np.diff(offsets)
    rank = np.arange(label.size) - np.repeat(offsets[:-1], lengths)
    in_head = (label >= level) & (rank < (k if k is not None else label.size + 1))
    expected = np.bincount(
        np.repeat(np.arange(lengths.size), lengths), weights=in_head.astype(np.float64), minlength=lengths.size
    )
    got = np.full(lengths.size, np.nan)
    ranked.head_counts(offsets, label, level, -1 if k is None else k, got, 0, lengths.size)
    assert got.tolist() == expected.tolist()


@settings(max_examples=300, deadline=None)
@given(lists_of_labels(), st.sampled_from(["linear", "exp"]))
def test_rank_weighted_sums_are_dcgs_product_bincounted_bit_for_bit(case: tuple[np.ndarray, np.ndarray], gain: str) -> None:
    """DCG as numpy formed it: each gain times discount(its rank), summed per query by a weighted bincount."""
    offsets, label = case
    values = np.where(label >= 0, label if gain == "linear" else np.exp2(np.nan_to_num(label)) - 1.0, 0.0)
    lengths = np.diff(offsets)
    rank = np.arange(label.size) - np.repeat(offsets[:-1], lengths)
    expected = np.bincount(
        np.repeat(np.arange(lengths.size), lengths), weights=values * discount(rank), minlength=lengths.size
    ).astype(np.float64)
    per_rank = discount(np.arange(int(lengths.max(initial=0))))
    for ranges in _splits(lengths.size):
        got = np.full(lengths.size, np.nan)
        for lo, hi in ranges:
            ranked.rank_weighted_sums(offsets, values, per_rank, got, lo, hi)
        assert got.tobytes() == expected.tobytes()


@settings(max_examples=200, deadline=None)
@given(lists_of_labels(), st.integers(1, 15))
def test_heads_are_numpys_repeat_and_gather(case: tuple[np.ndarray, np.ndarray], k: int) -> None:
    """A head's rows and labels as numpy built them (a repeat of each start, an arange, a fancy index)."""
    offsets, label = case
    kept = np.minimum(np.diff(offsets), k)
    ends = np.cumsum(kept)
    rows = np.repeat(offsets[:-1] - (ends - kept), kept) + np.arange(int(ends[-1]))
    lists = RankedLists(offsets, label, np.zeros(offsets.size, dtype=np.int64), np.zeros(0))
    head = lists.head(k)
    assert head.offsets.tolist() == [0, *ends.tolist()]
    assert head.label.tobytes() == label[rows].tobytes()
    got_rows = lists.head_rows(k)
    assert (got_rows if got_rows is not None else np.arange(label.size)).tolist() == rows.tolist()


def test_long_lists_split_over_threads_give_one_pass_bits() -> None:
    """Lists long enough to be read on every core (PARALLEL_FROM_ROWS): each measure's per-query values equal one pass
    over all the queries in this thread."""
    rng = np.random.default_rng(7)
    lengths = rng.integers(0, 120, size=2 * PARALLEL_FROM_ROWS // 60)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    label = rng.choice([0.0, 1.0, 2.0, np.nan], size=int(offsets[-1]))
    assert offsets[-1] >= PARALLEL_FROM_ROWS
    lists = RankedLists(offsets, label, np.zeros(offsets.size, dtype=np.int64), np.zeros(0))
    n = lengths.size
    one_pass = {name: np.zeros(n) for name in ("ap", "hits", "dcg")}
    ranked.precision_sums(offsets, label, 1.0, 10, one_pass["ap"], 0, n)
    ranked.head_counts(offsets, label, 1.0, -1, one_pass["hits"], 0, n)
    gains = np.nan_to_num(label)
    ranked.rank_weighted_sums(offsets, gains, discount(np.arange(120)), one_pass["dcg"], 0, n)
    first = np.zeros(n, dtype=np.int64)
    ranked.first_hits(offsets, label, 2.0, first, 0, n)
    assert lists.precision_sums(10).tobytes() == one_pass["ap"].tobytes()
    assert lists.relevant_in_head(None).tobytes() == one_pass["hits"].tobytes()
    assert lists.rank_weighted_sum(gains, discount(np.arange(120))).tobytes() == one_pass["dcg"].tobytes()
    assert lists.first_relevant_rank(2.0).tolist() == first.tolist()
