"""The paired tests are functions of the per-query differences and ids only: any order, any partitioning, same bits.

These tests compute each part's scan and partial sums, add them, and compare with the
result over all the queries at once with ``==`` (NaN equal to NaN).
"""

from __future__ import annotations

from functools import reduce

import numpy as np
import pytest

from harness.stats import anova, grid, keyed, paired

TESTS = ("t", "wilcoxon", "randomization", "bootstrap")


def _same(one: paired.Tested, two: paired.Tested) -> None:
    for name in ("statistic", "p", "ci_low", "ci_high"):
        np.testing.assert_array_equal(getattr(one.t, name), getattr(two.t, name), strict=True)
    for name in ("p", "ci_low", "ci_high"):
        np.testing.assert_array_equal(getattr(one.bootstrap, name), getattr(two.bootstrap, name), strict=True)
    np.testing.assert_array_equal(one.wilcoxon, two.wilcoxon, strict=True)
    np.testing.assert_array_equal(one.randomization, two.randomization, strict=True)
    np.testing.assert_array_equal(one.effect_size, two.effect_size, strict=True)
    for name in ("nonzero", "positive", "n"):
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name), strict=True)


def _split(
    d: np.ndarray, keys: np.ndarray, parts: list[np.ndarray], permutations: int, resamples: int, mask: np.ndarray | None = None
) -> paired.Tested:
    """Scan every part, plan from their sum, add the parts' partials (in the given order)."""
    mask = np.ones(d.shape, dtype=bool) if mask is None else mask
    scans = [paired.scan(d[:, p], mask[:, p]) for p in parts]
    plan = paired.Plan.of(reduce(lambda a, b: a + b, scans), TESTS, permutations, resamples)
    return paired.finish(plan, reduce(lambda a, b: a + b, [paired.partial(d[:, p], keys[p], plan, mask[:, p]) for p in parts]))


def _differences(rng: np.random.Generator, n: int) -> np.ndarray:
    rows = [
        rng.normal(0.02, 0.1, n),  # continuous: sampled randomisation, normal Wilcoxon
        np.round(rng.normal(0.0, 0.2, n), 1),  # few values: ties everywhere
        np.where(rng.random(n) < 0.9, 0.0, 0.3 - 0.2),  # mostly zero: enumerated randomisation, exact Wilcoxon
        np.full(n, 0.7 - 0.6),  # constant up to rounding (0.1 and 0.09999999999999998 would differ as floats)
        np.zeros(n),
        np.log(np.maximum(rng.random(n), 1e-5)) - np.log(np.maximum(rng.random(n), 1e-5)),  # GMAP's scale
        rng.normal(0, 1, n) * 1e6,  # sum aggregates: large values
    ]
    rows[3][::2] = 0.3 - 0.2
    return np.array(rows)


@pytest.mark.parametrize("n", [12, 257])
def test_any_partitioning_and_order_gives_the_same_bits(n: int) -> None:
    rng = np.random.default_rng(n)
    d = _differences(rng, n)
    ids = np.array([f"q{i}" for i in range(n)], dtype=object)
    keys = keyed.query_keys(5, ("ratings", "all"), ids)
    whole = paired.run_tests(d, keys, TESTS, permutations=3000, resamples=2000)
    for trial in range(4):
        order = rng.permutation(n)  # the queries in another order, cut at random places into 1 to 6 parts
        cuts = np.sort(rng.choice(np.arange(1, n), size=trial + trial // 2, replace=False))
        parts = [*np.split(order, cuts), order[:0]]  # and an empty part, as a cluster's shuffle can leave
        _same(whole, _split(d, keys, parts, 3000, 2000))
        _same(whole, _split(d, keys, parts[::-1], 3000, 2000))


def _row(tested: paired.Tested, i: int) -> paired.Tested:
    t, b = tested.t, tested.bootstrap
    return paired.Tested(
        paired.TResult(
            t.statistic[i : i + 1], t.p[i : i + 1], t.ci_low[i : i + 1], t.ci_high[i : i + 1], t.mean[i : i + 1], t.sd[i : i + 1]
        ),
        tested.wilcoxon[i : i + 1],
        tested.randomization[i : i + 1],
        paired.BootstrapResult(b.p[i : i + 1], b.ci_low[i : i + 1], b.ci_high[i : i + 1]),
        tested.effect_size[i : i + 1],
        tested.nonzero[i : i + 1],
        tested.positive[i : i + 1],
        tested.n[i : i + 1],
    )


def test_a_masked_row_is_its_own_queries_alone_in_any_partitioning() -> None:
    """Rows tested on their own queries (NaN dropped, queries a system lacks) share one block of draws, exactly."""
    rng = np.random.default_rng(21)
    n = 120
    d = _differences(rng, n)
    mask = rng.random(d.shape) < 0.8
    mask[4] = False  # a row with no query at all
    mask[2, :] = np.arange(n) < 9  # too few for the bootstrap
    d[~mask & (rng.random(d.shape) < 0.5)] = np.nan  # left-out values may be NaN
    keys = keyed.numbered_keys(3, n)
    together = paired.run_tests(d, keys, TESTS, 2000, 1000, mask=mask)
    for i in range(d.shape[0]):
        alone = paired.run_tests(d[i][mask[i]], keys[mask[i]], TESTS, 2000, 1000)
        _same(_row(together, i), alone)
    parts = np.array_split(rng.permutation(n), 4)
    _same(together, _split(d, keys, parts, 2000, 1000, mask))


def test_a_querys_draws_follow_its_id_not_its_place() -> None:
    """Leaving one query out changes no other query's draws (a generator walked along the queries would)."""
    ids = np.array([f"q{i}" for i in range(50)], dtype=object)
    keys = keyed.query_keys(1, ("d", "all"), ids)
    kept = np.arange(50) != 17
    np.testing.assert_array_equal(keyed.query_keys(1, ("d", "all"), ids[kept]), keys[kept])
    np.testing.assert_array_equal(keyed.sign_matrix(keys[kept], 100, 70), keyed.sign_matrix(keys, 100, 70)[:, kept])
    np.testing.assert_array_equal(keyed.poisson_matrix(keys[kept], 9, 30), keyed.poisson_matrix(keys, 9, 30)[:, kept])
    assert not np.array_equal(keyed.query_keys(2, ("d", "all"), ids), keys)  # the seed matters
    assert not np.array_equal(keyed.query_keys(1, ("d", "head"), ids), keys)  # and so does the comparison's identity


@pytest.mark.parametrize("n", [1, 7, 8, 9, 257, 3001])
def test_sign_products_equal_the_sign_matrix_times_the_limbs(n: int) -> None:
    """The randomisation test's sums without the sign matrix (subset tables of 8 queries) are the matrix product's
    bits: the limbs a test stacks (largest magnitude, both signs, columns not a multiple of the kernel's width), any
    first replicate (across 64-replicate words), any split of the replicates over threads."""
    rng = np.random.default_rng(n)
    keys = keyed.numbered_keys(11, n)
    d = rng.normal(0, 1, (5, n)) * np.exp(rng.normal(0, 3, (5, n)))
    on = grid.on_grid(d, grid.exponent(np.abs(d).max(axis=1)))
    bits = grid.limb_bits(3 * n)
    limbs = grid.split_limbs(on, bits)  # (L, 5, n), the top limb signed
    stacked = np.ascontiguousarray(limbs.transpose(2, 0, 1).reshape(n, -1))
    for first, count in ((0, 1), (0, 200), (63, 130)):
        product = keyed.sign_matrix(keys, first, count) @ stacked
        np.testing.assert_array_equal(keyed.sign_products(keys, stacked, count, first), product, strict=True)
        # a thread's share of the replicates alone gives the same rows
        np.testing.assert_array_equal(
            keyed.sign_products(keys, stacked, count - count // 3, first + count // 3), product[count // 3 :], strict=True
        )
    # the sums are those of Python integers
    exact = [
        [sum(int(v) for v in np.asarray(stacked[:, c])[keyed.sign_matrix(keys, 5, 1)[0] == 1]) for c in range(stacked.shape[1])]
    ]
    assert keyed.sign_products(keys, stacked, 1, 5).astype(object).tolist() == exact


@pytest.mark.parametrize(("m", "n", "measures"), [(3, 1, 1), (3, 300, 2), (3, 2049, 5), (4, 999, 2), (5, 1000, 3), (6, 777, 4)])
def test_slot_sums_equal_the_indicator_products(m: int, n: int, measures: int) -> None:
    """The Tukey trials' slot sums, each (trial, query) adding its drawn systems' limbs (compiled, queries a tile at a
    time; for three systems a table of each pair of queries' 36 rows, an odd last
    query alone), are the indicator matrices' products with the limbs, bit for bit: the largest limbs of both signs,
    several tiles of queries, even and odd counts, any first trial, any split of the trials; and the sums are those
    of Python integers."""
    from itertools import permutations

    rng = np.random.default_rng(n)
    keys = keyed.numbered_keys(13, n)
    d = rng.normal(0, 1, (measures, m, n)) * np.exp(rng.normal(0, 3, (measures, m, n)))
    on = grid.on_grid(d.reshape(measures, -1), grid.exponent(np.abs(d).reshape(measures, -1).max(axis=1)))
    on = on.reshape(measures, m, n)
    bits = grid.limb_bits(3 * n)
    # each system's limbs less the last one's, (n, L * M) as the analysis stacks them, in groups of the kernel's width
    limbs = [grid.split_limbs(on[:, j] - on[:, m - 1], bits, grid.PRECISION + 1) for j in range(m - 1)]  # (L, M, n)
    wide = np.stack([part.transpose(2, 0, 1).reshape(n, -1) for part in limbs])
    columns, width = wide.shape[2], keyed.SUMMED_COLUMNS
    groups = -(-columns // width)
    padded = np.zeros((m - 1, n, groups * width))
    padded[:, :, :columns] = wide
    grouped = np.ascontiguousarray(padded.reshape(m - 1, n, groups, width).transpose(0, 2, 1, 3))
    table = np.array(list(permutations(range(m))), dtype=np.int8)[:, : m - 1]  # system m - 1 is beyond x's: adds 0
    trials = 70
    choice = keyed.uniform_matrix(keys, len(table), 0, trials)
    product = np.stack(
        [sum((table[choice, i] == j).astype(np.float64) @ padded[j] for j in range(m - 1)) for i in range(m - 1)], axis=1
    )
    out = keyed.slot_sums(keys, table, grouped, 0, trials, np.zeros((trials, m - 1, groups * width)))
    np.testing.assert_array_equal(out, product, strict=True)
    split = np.zeros_like(out)
    for lo, hi in ((0, 1), (1, 40), (40, trials)):  # a thread's share of the trials alone gives its rows
        keyed.slot_sums(keys, table, grouped, lo, hi, split)
    assert split.tobytes() == out.tobytes()
    sent = table[choice[5]]  # (n, m - 1): the system each query sends to each slot in trial 5
    exact = [
        [sum(int(padded[sent[q, i], q, c]) for q in range(n) if sent[q, i] < m - 1) for c in range(columns)] for i in range(m - 1)
    ]
    assert out[5, :, :columns].astype(object).tolist() == exact


def test_poisson_weights_have_poisson_1_frequencies() -> None:
    keys = keyed.numbered_keys(0, 2000)
    w = keyed.poisson_matrix(keys, 0, 500).astype(np.int64).ravel()
    expected = np.exp(-1) / np.array([1, 1, 2, 6, 24, 120], dtype=np.float64)
    observed = np.bincount(w, minlength=6)[:6] / w.size
    assert (np.abs(observed - expected) <= 5 * np.sqrt(expected / w.size)).all(), (observed, expected)
    signs = keyed.sign_matrix(keys, 0, 500)
    assert abs(signs.mean() - 0.5) < 5 * np.sqrt(0.25 / signs.size)


def test_grid_sums_are_exact_where_float_sums_are_not() -> None:
    rng = np.random.default_rng(3)
    d = rng.normal(0, 1, (1, 10_000)) * np.exp(rng.normal(0, 5, 10_000))
    e = grid.exponent(np.abs(d).max(axis=1))
    on = grid.on_grid(d, e)
    bits = grid.limb_bits(3 * d.shape[1])
    limbs = grid.split_limbs(on, bits)
    parts = np.array_split(rng.permutation(d.shape[1]), 7)
    by_parts = sum(limbs[:, :, p].sum(axis=2) for p in parts)
    assert int(grid.combine_exactly(by_parts, bits)[0]) == sum(int(v) for v in on[0].tolist())
    assert sum(float(d[0, p].sum()) for p in parts) != float(d.sum())  # the plain float sum depends on the split


@pytest.mark.parametrize("shape", ["wide exponents", "subnormals and zeros", "one value", "extremes", "cancelling"])
def test_float_total_is_the_exact_rational_sum(shape: str) -> None:
    """``grid.float_total`` (a compiled pass over the mantissas' limbs) is the sum in exact rational arithmetic, and
    its exponent the least of the values' (a zero or subnormal counts as the smallest normal's field)."""
    from fractions import Fraction

    rng = np.random.default_rng(11)
    tiny = np.finfo(np.float64).smallest_subnormal
    values = {
        "wide exponents": rng.normal(0, 1, 5_000) * np.exp2(rng.integers(-300, 300, 5_000)),
        "subnormals and zeros": np.concatenate([rng.integers(-50, 50, 300) * tiny, np.zeros(5), -np.zeros(5), [1.5]]),
        "one value": np.array([-0.1]),
        "extremes": np.array([np.finfo(np.float64).max, -np.finfo(np.float64).max, np.finfo(np.float64).max / 3, tiny]),
        "cancelling": np.array([1e16, 1.0, -1e16, 0.1, 0.2, -0.3]),
    }[shape]
    integer, exponent = grid.float_total(values)
    assert Fraction(integer) * Fraction(2) ** exponent == sum((Fraction(float(v)) for v in values), Fraction(0))
    fields = np.maximum((values.view(np.int64) >> 52) & 0x7FF, 1)
    assert exponent == int(fields.min()) - 1075
    with pytest.raises(ValueError, match="3 limbs x 2048 exponents"):  # the compiled pass writes only where it can
        grid.kernels.exponent_limb_sums(values, np.zeros((3, 1024), dtype=np.int64))


@pytest.mark.parametrize("m", [3, 8])  # 8 systems: the block path beyond the tabled permutations
def test_the_tukey_trials_tell_their_progress_and_keep_their_bits(m: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``anova.run(done=...)`` is told the share of the trials done, rising to 1, as the threads finish them (over
    measure blocks too), and its results are those of the run without it, bit for bit."""
    rng = np.random.default_rng(21)
    x = rng.random((5, m, 300))
    keys = keyed.numbered_keys(7, 300)
    monkeypatch.setattr(anova, "MEASURES_BUDGET", (8 * m * (8 * 1500 + 6 * 300) + 1) * 2)  # 2 measures a block: 3
    shares: list[float] = []
    told = anova.run(x, keys, 1500, done=shares.append)
    plain = anova.run(x, keys, 1500)
    assert shares == sorted(shares) and shares[-1] == 1.0 and 0 < shares[0] < 0.5
    assert len(shares) >= (3 * 3 if m == 3 else 3)  # tiles of 512 trials within each block, or a block at a time
    assert [r.p for r in told[0]] == [r.p for r in plain[0]]
    assert told[1] is not None and plain[1] is not None and told[1].tobytes() == plain[1].tobytes()


@pytest.mark.parametrize("m", [4, 7])  # 7 systems: shuffled permutations, not drawn from the table of all
def test_anova_and_tukey_do_not_depend_on_the_queries_order(m: int) -> None:
    from harness.stats import anova as group_stats
    from harness.stats.anova import randomized_tukey_hsd, two_way_anova

    rng = np.random.default_rng(8)
    x = rng.random((2, m, 300)) + np.linspace(0, 0.1, m)[None, :, None]
    x[1] = np.round(x[1], 1)  # ties
    keys = keyed.numbered_keys(4, 300)
    order = rng.permutation(300)
    for k in range(2):
        assert two_way_anova(x[k]) == two_way_anova(x[k][:, order])
    plan = group_stats.Plan.of(group_stats.scan(x), 500)  # split in three parts, one empty: the same sums
    parts = [order[:100], order[:0], order[100:]]
    whole = group_stats.partial(x, keys, plan)
    added = reduce(lambda a, b: a + b, [group_stats.partial(x[:, :, p], keys[p], plan) for p in parts])
    np.testing.assert_array_equal(group_stats.tukey(plan, whole, m), group_stats.tukey(plan, added, m))
    assert group_stats.anova(plan, whole, m) == group_stats.anova(plan, added, m)
    np.testing.assert_array_equal(randomized_tukey_hsd(x, keys, 2000), randomized_tukey_hsd(x[:, :, order], keys[order], 2000))


def test_anova_sums_of_squares_are_exact_where_floats_cancel() -> None:
    """Systems that differ by a constant 1e-9 on values near 1e3: SS_residual is 0 exactly, F infinite."""
    from harness.stats.anova import two_way_anova

    base = 1e3 + np.random.default_rng(2).random(50)
    result = two_way_anova(np.array([base, base + 2.0**-20]))
    assert result.residual_variance == 0.0 and result.f == float("inf") and result.p == 0.0


@pytest.mark.parametrize("measure", ["AP", "GMAP", "NumRet", "ILD(sim=features)@10"])  # mean, gmean, sum, NaN skipped
@pytest.mark.parametrize("special", ["", "nan", "inf", "-inf", "both"])
def test_summary_rows_from_parts_are_the_rows_of_the_whole(measure: str, special: str) -> None:
    """A summary row made from parts (scan each part, add; sum each part on the whole's grid, add) is
    ``summarize``'s row exactly: with values spanning magnitudes, non-finite values, and parts that are empty."""
    from harness.evaluation.results import ValuesScan, grid_sums, kept, summary_row
    from harness.measures.parse import parse_measure

    m = parse_measure(measure)
    rng = np.random.default_rng(7)
    values = rng.random(500) * np.exp(rng.normal(0, 6, 500))
    values[rng.random(500) < 0.1] = 0.0
    for value, where in {
        "nan": [(np.nan, 3)],
        "inf": [(np.inf, 10)],
        "-inf": [(-np.inf, 400)],
        "both": [(np.inf, 5), (-np.inf, 6)],
    }.get(special, []):
        values[where] = value
    values[[20, 30]] = np.nan if "ILD" in measure else values[[20, 30]]  # undefined for two users: left out
    whole = kept(m, values)
    scan = ValuesScan.of(m, whole)
    expected = summary_row(m, scan, grid_sums(whole, scan.exponent()))
    for n_parts in (1, 2, 7):
        cuts = np.sort(rng.integers(0, values.size, n_parts - 1))
        parts = [kept(m, p) for p in np.split(values[rng.permutation(values.size)], cuts)] + [np.zeros(0)]
        scans = reduce(lambda a, b: a + b, [ValuesScan.of(m, p) for p in parts])
        sums = [grid_sums(p, scans.exponent()) for p in parts]
        got = summary_row(m, scans, (sum(s[0] for s in sums), sum(s[1] for s in sums)))
        assert got.keys() == expected.keys()
        for key, value in expected.items():
            assert got[key] == value or (value != value and got[key] != got[key]), (key, got[key], value)


def test_diagnostic_sums_of_parts_are_the_whole_runs() -> None:
    """The diagnostics' sums (judged fractions summed exactly) of any split of the queries add up to the whole's."""
    from harness.evaluation.diagnostics import DiagnosticSums

    rng = np.random.default_rng(3)
    n = 1000
    in_run = rng.random(n) < 0.9
    parts = {"n_ret": rng.integers(0, 100, n), "tied_10": rng.random(n) < 0.2, "judged_10": rng.integers(0, 11, n) / 10}
    whole = DiagnosticSums.of(in_run, parts, (10,))
    order = rng.permutation(n)
    pieces = [order[s] for s in (slice(0, 10), slice(10, 500), slice(500, 500), slice(500, n))]
    added = reduce(
        lambda a, b: a + b,
        [DiagnosticSums.of(in_run[p], {k: v[p] for k, v in parts.items()}, (10,)) for p in pieces],
        DiagnosticSums.empty((10,)),
    )
    assert added == whole and whole.retrieved == int(in_run.sum()) and whole.tied == (int(parts["tied_10"].sum()),)


def test_the_draw_kernels_refuse_shapes_they_would_read_or_write_past() -> None:
    """The compiled draws run without bounds checks: each checks its arguments' shapes once per call instead."""
    from harness.stats import _keyed_compiled as compiled

    keys = keyed.numbered_keys(1, 10)
    bytes_, hashes = np.zeros(5, np.uint8), np.empty(2, np.uint64)
    table, slot_x = np.array([[0, 1], [1, 2], [2, 0]], np.int8), np.zeros((2, 1, 10, 8))
    refused = {
        "rows past the output": lambda: compiled.sign_bits(keys, 0, 0, 5, np.empty((4, 10))),
        "a column per query": lambda: compiled.poisson_weights(keys, keyed.POISSON_THRESHOLDS, 0, 0, 4, np.empty((4, 9))),
        "six thresholds": lambda: compiled.poisson_weights(keys, keyed.POISSON_THRESHOLDS[:3], 0, 0, 4, np.empty((4, 10))),
        "a key per row of x": lambda: compiled.sign_products(keys[:9], np.zeros((10, 8)), 0, 0, 4, np.empty((4, 8))),
        "x's columns": lambda: compiled.sign_products(keys, np.zeros((10, 8)), 0, 0, 4, np.empty((4, 16))),
        "m places": lambda: compiled.shuffles(keys, 3, 0, 0, 2, np.empty((2, 10, 4), np.int8)),
        "slot rows past the output": lambda: compiled.slot_sums(keys, table, slot_x, 0, 0, 5, np.zeros((4, 2, 8))),
        "slots of the table": lambda: compiled.slot_sums(keys, table, slot_x, 0, 0, 4, np.zeros((4, 3, 8))),
        "x's queries": lambda: compiled.slot_sums(keys[:9], table, slot_x, 0, 0, 4, np.zeros((4, 2, 8))),
        "x's group width": lambda: compiled.slot_sums(keys, table, np.zeros((2, 2, 10, 4)), 0, 0, 4, np.zeros((4, 2, 8))),
        "at most 5 slots": lambda: compiled.slot_sums(keys, np.zeros((2, 6), np.int8), slot_x, 0, 0, 4, np.zeros((4, 6, 8))),
        "a system's number": lambda: compiled.slot_sums(keys, -table, slot_x, 0, 0, 4, np.zeros((4, 2, 8))),
        "rows that follow": lambda: compiled.slot_sums(
            keys, np.zeros((3, 3), np.int8)[:, :2], slot_x, 0, 0, 4, np.zeros((4, 2, 8))
        ),
        "queries that follow": lambda: compiled.slot_sums(
            keys, table, np.zeros((2, 1, 20, 8))[:, :, ::2], 0, 0, 4, np.zeros((4, 2, 8))
        ),
        "k of at least 1": lambda: compiled.below(keys, 0, 0, 0, 2, np.empty((2, 10), np.uint16)),
        "offsets in order": lambda: compiled.hash_strings(np.array([0, 5, 3]), bytes_, 0, 0, 2, hashes),
        "bytes there": lambda: compiled.hash_strings(np.array([0, 5, 9]), bytes_, 0, 0, 2, hashes),
    }
    for what, call in refused.items():
        with pytest.raises(ValueError):
            call()
            pytest.fail(what)


@pytest.mark.parametrize(("m", "n"), [(3, 1500), (5, 2100)])
def test_the_tiled_tukey_trials_are_their_definition(m: int, n: int) -> None:
    """The randomised Tukey HSD, its trials drawn and multiplied a tile at a time over the cores, against its definition
    written out: in trial t query q sends system perm[i] to slot i, perm the keyed draw among the m! permutations;
    p_ij = (1 + #{range of the slots' means >= |mean_i - mean_j|}) / (B + 1). Values on a grid of 1/8, so that the
    brute force's float sums are exact too."""
    from itertools import permutations

    from harness.stats import anova

    rng = np.random.default_rng(m)
    x = rng.integers(0, 9, size=(1, m, n)) / 8.0  # equal systems: p-values spread over (0, 1], none at an end
    keys = keyed.numbered_keys(4, n)
    trials = 600
    got = anova.run(x, keys, trials)[1]
    assert got is not None
    table = np.array(list(permutations(range(m))))
    choice = keyed.uniform_matrix(keys, len(table), 0, trials)  # (trials, n)
    perm = table[choice]  # (trials, n, m): slot i holds system perm[..., i]
    slots = np.take_along_axis(np.broadcast_to(x[0].T, (trials, n, m)), perm, axis=2).mean(axis=1)  # (trials, m)
    ranges = slots.max(axis=1) - slots.min(axis=1)
    means = x[0].mean(axis=1)
    expected = np.ones((m, m))
    for i in range(m):
        for j in range(m):
            if i != j:
                observed = abs(means[i] - means[j])  # as extreme up to rounding, as the test counts it
                expected[i, j] = (1 + np.sum(ranges >= observed - 1e-12 * max(1.0, observed))) / (trials + 1)
    np.testing.assert_array_equal(got[0], expected)
    assert 0.02 < expected[~np.eye(m, dtype=bool)].min() < 1  # trials on both sides of some observed difference
