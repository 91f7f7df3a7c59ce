"""The compiled per-user sums of the beyond-accuracy measures (``segment_sums``) against ``np.bincount`` with weights,
which they replaced: the same bits for any values, signed zeros, infinities and NaN included."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.kernels._lookup_compiled import (
    code_weights,
    cut_sums,
    feature_sums,
    segment_counts,
    segment_sums,
    unexpected_sums,
)

_VALUES = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 0.1, 1e16, -1e16, 3.0]))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_VALUES, max_size=12), max_size=8))
def test_segment_sums_are_bincounts_bit_for_bit(segments: list[list[float]]) -> None:
    lengths = np.array([len(s) for s in segments], dtype=np.int64)
    values = np.array([v for s in segments for v in s], dtype=np.float64)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    expected = np.bincount(np.repeat(np.arange(lengths.size), lengths), weights=values, minlength=lengths.size)
    assert segment_sums(offsets, values).tobytes() == expected.astype(np.float64).tobytes()


def test_segment_sums_by_hand() -> None:
    """In order from 0.0: (0.1 + 0.2) + 0.3 is 0.6000000000000001, not 0.6; an empty segment sums to 0."""
    sums = segment_sums(np.array([0, 3, 3, 4]), np.array([0.1, 0.2, 0.3, -0.0]))
    assert sums.tolist() == [0.6000000000000001, 0.0, 0.0] and not np.signbit(sums[2])


@st.composite
def cut_lists(draw: st.DrawFn) -> dict[str, object]:
    """Users' cut rows (their first rows, in order) over lists that may be longer, with NaN (unjudged) labels."""
    n_codes = draw(st.integers(1, 6))
    list_lengths = draw(st.lists(st.integers(0, 9), min_size=1, max_size=6))
    k = draw(st.integers(1, 10))
    cut_lengths = [min(n, k) for n in list_lengths]
    list_offsets = np.concatenate(([0], np.cumsum(list_lengths))).astype(np.int64)
    rows = np.concatenate([np.arange(list_offsets[u], list_offsets[u] + n) for u, n in enumerate(cut_lengths)] + [[]])
    n_rows = int(list_offsets[-1])
    label = st.one_of(st.sampled_from([0.0, 1.0, 2.0]), st.just(float("nan")))
    return {
        "offsets": np.concatenate(([0], np.cumsum(cut_lengths))).astype(np.int64),
        "rows": rows.astype(np.int64),
        "gathered": draw(st.booleans()),
        "code": np.array(draw(st.lists(st.integers(0, n_codes - 1), min_size=len(rows), max_size=len(rows))), np.int64),
        "table": np.array(draw(st.lists(_VALUES, min_size=n_codes, max_size=n_codes)), dtype=np.float64),
        "label": np.array(draw(st.lists(label, min_size=n_rows, max_size=n_rows)), dtype=np.float64),
        "per_rank": 1.0 / np.log2(np.arange(max(cut_lengths, default=0)) + 2.0),
    }


@settings(max_examples=300, deadline=None)
@given(cut_lists(), st.booleans(), st.booleans(), st.sampled_from([1.0, 2.0]))
def test_cut_sums_are_the_gathered_weighted_masked_column_summed(case: dict, masked: bool, weighted: bool, level: float) -> None:
    """What numpy builds column by column (the row's label, its rank's weight times its code's value, 0.0 where the
    label is below the level), summed per user: the kernel gives its bits without building it."""
    offsets, rows, code, table = case["offsets"], case["rows"], case["code"], case["table"]
    labels = case["label"] if case["gathered"] else case["label"][rows]  # a cut of every row reads labels in place
    lengths = np.diff(offsets)
    rank = np.arange(rows.size) - np.repeat(offsets[:-1], lengths)
    column = case["per_rank"][rank] * table[code] if weighted else table[code]
    if masked:
        column = np.where((labels[rows] if case["gathered"] else labels) >= level, column, 0.0)
    expected = segment_sums(offsets, column)
    got = cut_sums(
        offsets,
        code,
        table,
        labels if masked else np.zeros(0),
        rows if case["gathered"] else np.zeros(0, dtype=np.int64),
        level,
        case["per_rank"] if weighted else np.zeros(0),
    )
    assert got.tobytes() == expected.tobytes()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.booleans(), max_size=9), max_size=8))
def test_segment_counts_are_bincounts(segments: list[list[bool]]) -> None:
    """What ``num_rel`` and ``count`` summed before: the weighted bincount of the mask by each entry's segment."""
    lengths = np.array([len(s) for s in segments], dtype=np.int64)
    mask = np.array([v for s in segments for v in s], dtype=bool)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    expected = np.bincount(np.repeat(np.arange(lengths.size), lengths), weights=mask.astype(np.float64), minlength=lengths.size)
    assert segment_counts(offsets, mask.view(np.uint8)).tolist() == expected.tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_VALUES, st.lists(st.integers(0, 4), max_size=6)), max_size=8), st.booleans())
def test_code_weights_are_weighted_bincounts_bit_for_bit(users: list[tuple[float, list[int]]], weighted: bool) -> None:
    """Coverage's counts as numpy added them: each row's user weight (1.0 without weights) at its item, in row order."""
    lengths = np.array([len(codes) for _, codes in users], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    code = np.array([c for _, codes in users for c in codes], dtype=np.int64)
    weight = np.array([w for w, _ in users], dtype=np.float64)
    per_row = weight[np.repeat(np.arange(lengths.size), lengths)] if weighted else np.ones(code.size)
    expected = np.bincount(code, weights=per_row, minlength=5)
    got = code_weights(offsets, code, weight if weighted else np.zeros(0), 5)
    assert got.tobytes() == expected.astype(np.float64).tobytes()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 3), max_size=6), max_size=6),
    st.lists(st.lists(_VALUES, min_size=3, max_size=3), min_size=4, max_size=4),
)
def test_feature_sums_are_the_list_matrix_product_bit_for_bit(lists: list[list[int]], features: list[list[float]]) -> None:
    """ILD's and Serendipity's summed feature vectors as scipy formed them: each user's list as a CSR row of ones, times
    the (items x features) matrix."""
    from scipy import sparse

    lengths = np.array([len(codes) for codes in lists], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    code = np.array([c for codes in lists for c in codes], dtype=np.int64)
    table = np.array(features, dtype=np.float64)
    matrix = sparse.csr_matrix((np.ones(code.size), code, offsets), shape=(lengths.size, 4))
    expected = np.asarray(matrix @ table)
    for cuts in ([0, lengths.size], [0, lengths.size // 2, lengths.size]):  # whole, or two threads' ranges
        got = np.zeros((lengths.size, 3))
        for lo, hi in itertools.pairwise(cuts):
            feature_sums(offsets, code, table, got, lo, hi)
        # bit for bit, but for which NaN's payload survives where two NaNs meet: IEEE 754 leaves that to the
        # implementation, and C compilers pick either operand of a commutative add
        nan = np.isnan(expected)
        assert np.array_equal(np.isnan(got), nan)
        assert got[~nan].tobytes() == expected[~nan].tobytes()


_SIMILARITY = st.floats(0.0, 50.0, allow_nan=False) | st.sampled_from([0.0, 1.0, 1e-300])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.tuples(_SIMILARITY, st.sampled_from([0.0, 1.0, 2.0, float("nan")])), max_size=6), st.integers(0, 5)
        ),
        max_size=8,
    ),
    st.sampled_from([None, 1.0, 2.0]),
    st.booleans(),
    st.integers(0, 8),
)
def test_unexpected_sums_are_serendipitys_numpy(
    users: list[tuple[list[tuple[float, float]], int]], level: float | None, gathered: bool, cut: int
) -> None:
    """Serendipity's per-user sums of 1 - similarity / |H| (0 where not relevant), as numpy built them over the cut rows;
    users without history (a division by zero, discarded later), a cut deeper or shallower than the lists, and any
    split of the users between two ranges."""
    lengths = np.array([len(rows) for rows, _ in users], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    similarity = np.array([v for rows, _ in users for v, _ in rows], dtype=np.float64)
    label = np.array([lab for rows, _ in users for _, lab in rows], dtype=np.float64)
    h_len = np.array([h for _, h in users], dtype=np.int64)
    if gathered:  # each user's first `cut` rows, as _cut_view gathers them
        kept = np.minimum(lengths, cut)
        cut_offsets = np.concatenate(([0], np.cumsum(kept))).astype(np.int64)
        rows = np.concatenate([np.arange(offsets[u], offsets[u] + kept[u]) for u in range(len(users))] or [[]]).astype(np.int64)
    else:
        cut_offsets, rows = offsets, np.zeros(0, dtype=np.int64)
    taken = similarity if not gathered else similarity[rows]
    qidx = np.repeat(np.arange(len(users)), np.diff(cut_offsets))
    with np.errstate(invalid="ignore", divide="ignore"):
        unexpected = 1.0 - taken / h_len[qidx]
    if level is not None:
        unexpected = np.where((label if not gathered else label[rows]) >= level, unexpected, 0.0)
    expected = segment_sums(cut_offsets, np.ascontiguousarray(unexpected, dtype=np.float64))
    for cuts in ([0, len(users)], [0, len(users) // 2, len(users)]):
        got = np.zeros(len(users))
        for lo, hi in itertools.pairwise(cuts):
            unexpected_sums(
                cut_offsets,
                rows,
                similarity,
                h_len,
                np.zeros(0) if level is None else label,
                0.0 if level is None else level,
                got,
                lo,
                hi,
            )
        assert got.tobytes() == expected.tobytes()
