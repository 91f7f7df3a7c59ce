"""System measures (Coverage, Gini, Entropy) compared by resampling users.

The p-value is the paired randomization test over users (swap the two systems' lists for
random users): exact under exchangeability, so its size is alpha whatever the measure. The
CI is the centred bootstrap over users.
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.comparison.compare import CompareSettings, _system_rows, compare, system_summary
from harness.data.items import Interactions
from harness.data.model import Qrels, Run
from harness.evaluation.evaluator import Evaluator
from harness.evaluation.results import RunResult

N_ITEMS, K = 200, 10
ITEMS = [f"i{i:03d}" for i in range(N_ITEMS)]
POPULARITY = 1.0 / np.arange(1, N_ITEMS + 1) ** 0.9


def _evaluator(users: list[str]) -> Evaluator:
    rng = np.random.default_rng(0)
    share = POPULARITY / POPULARITY.sum()
    train = Interactions.from_records([(u, ITEMS[i]) for u in users for i in rng.choice(N_ITEMS, 5, replace=False, p=share)])
    return Evaluator(Qrels.from_records([(u, ITEMS[0], 1) for u in users]), ["Coverage@10", "Gini@10", "Entropy@10"], train=train)


def _result(evaluator: Evaluator, users: list[str], seed: int, name: str, head: int = N_ITEMS) -> RunResult:
    """Each user's K items drawn by popularity from the ``head`` most popular items."""
    rng = np.random.default_rng(seed)
    share = POPULARITY[:head] / POPULARITY[:head].sum()
    rows = [(u, ITEMS[i], float(K - j)) for u in users for j, i in enumerate(rng.choice(head, K, replace=False, p=share))]
    aligned = evaluator.align(Run.from_records(rows, name=name))
    lists = evaluator.item_lists(aligned)
    per_query = evaluator.evaluate_aligned(name, aligned, lists)
    return RunResult("d", name, per_query, np.full(len(users), "", dtype=object), {}, lists, evaluator.system_measures)


@pytest.mark.slow
def test_randomization_over_users_holds_its_size() -> None:
    """A/A: two systems drawing lists the same way; the test rejects at about alpha (300 trials, SE 0.013)."""
    users = [f"u{u:03d}" for u in range(150)]
    evaluator = _evaluator(users)
    queries = np.array(users, dtype=object)
    p: dict[str, list[float]] = {}
    for trial in range(300):
        a, b = _result(evaluator, users, 2 * trial + 1, "a"), _result(evaluator, users, 2 * trial + 2, "b")
        for row in _system_rows("d", "all", a, b, queries, CompareSettings(system_resamples=200, seed=trial)):
            p.setdefault(row["measure"], []).append(row["p_randomization"])
    for measure, values in p.items():
        rate = float(np.mean(np.array(values) < 0.05))
        assert 0.015 <= rate <= 0.09, (measure, rate)


def test_a_narrower_system_covers_significantly_less() -> None:
    users = [f"u{u:03d}" for u in range(200)]
    evaluator = _evaluator(users)
    wide, narrow = _result(evaluator, users, 1, "wide"), _result(evaluator, users, 2, "narrow", head=60)
    settings = CompareSettings(system_resamples=300, mode="all_pairs")
    rows = [r.to_record() for r in compare([wide, narrow], evaluator.measures, settings)]
    by = {r["measure"]: r for r in rows}
    coverage = by["Coverage@10"]
    assert coverage["delta"] < 0 and coverage["significant"] and coverage["primary_test"] == "randomization"
    assert coverage["p_randomization"] == pytest.approx(1 / 301) and coverage["ci_high"] < 0  # no replicate as extreme
    assert by["Gini@10"]["delta"] > 0 and by["Gini@10"]["significant"] and not by["Gini@10"]["higher_is_better"]
    # the values are those of each run on its own
    own = {r["measure"]: r["value"] for r in system_summary(wide, CompareSettings())}
    assert coverage["mean_a"] == pytest.approx(own["Coverage@10"], rel=1e-15)


def test_identical_systems_have_p_one_and_a_zero_interval() -> None:
    users = [f"u{u:03d}" for u in range(50)]
    evaluator = _evaluator(users)
    a, b = _result(evaluator, users, 5, "a"), _result(evaluator, users, 5, "b")
    for row in _system_rows("d", "all", a, b, np.array(users, dtype=object), CompareSettings(system_resamples=200)):
        assert row["delta"] == 0 and row["p_randomization"] == 1.0 and row["ci_low"] == row["ci_high"] == 0


def test_a_pair_does_not_depend_on_other_systems() -> None:
    """The draws are keyed by the users compared, not by what else is in the table."""
    users = [f"u{u:03d}" for u in range(80)]
    evaluator = _evaluator(users)
    a, b, c = (_result(evaluator, users, s, n) for s, n in ((1, "a"), (2, "b"), (3, "c")))
    settings = CompareSettings(system_resamples=200, mode="all_pairs", correction="none")
    two = [r.to_record() for r in compare([a, b], evaluator.measures, settings)]
    three = [r.to_record() for r in compare([c, a, b], evaluator.measures, settings)]

    def pick(rows):
        return {
            r["measure"]: (r["p_randomization"], r["ci_low"], r["ci_high"])
            for r in rows
            if {r["system_a"], r["system_b"]} == {"a", "b"}
        }

    assert pick(two) == pick(three)


def test_the_summary_interval_contains_the_value() -> None:
    users = [f"u{u:03d}" for u in range(120)]
    evaluator = _evaluator(users)
    for row in system_summary(_result(evaluator, users, 9, "a"), CompareSettings(system_resamples=300)):
        assert row["ci_low"] < row["value"] < row["ci_high"], row


def _hand_gini(lists: dict[str, list[str]], universe: set[str]) -> float:
    """RecBole's Gini by its formula over the universe plus the items recommended outside it (zeros for the rest)."""
    counts: dict[str, int] = {}
    for items in lists.values():
        for item in items[:K]:
            counts[item] = counts.get(item, 0) + 1
    x = np.sort(np.array([counts.get(i, 0) for i in universe | set(counts)], dtype=float))
    n = x.size
    j = np.arange(1, n + 1)
    return float(((2 * j - n - 1) * x).sum() / (n * x.sum()))


def test_a_systems_gini_is_one_value_alone_and_beside_any_other() -> None:
    """Items a system recommends outside the training items join its own universe, not the other system's: the
    comparison's values are each system's own, as its summary row and a hand computation give them."""
    users = [f"u{u:03d}" for u in range(40)]
    trained = set(ITEMS[:50])
    train = Interactions.from_records([(u, item) for u in users for item in sorted(trained)])
    evaluator = Evaluator(Qrels.from_records([(u, ITEMS[0], 1) for u in users]), ["Gini@10"], train=train)
    rng = np.random.default_rng(4)
    lists = {
        "a": {u: [ITEMS[i] for i in rng.choice(30, K, replace=False)] for u in users},
        "b": {
            u: [f"new{i:02d}" for i in rng.choice(12, 3, replace=False)]
            + [ITEMS[i] for i in rng.choice(30, K - 3, replace=False)]
            for u in users
        },
    }
    results = {}
    for name, by_user in lists.items():
        rows = [(u, item, float(K - r)) for u, items in by_user.items() for r, item in enumerate(items)]
        aligned = evaluator.align(Run.from_records(rows, name=name))
        item_lists = evaluator.item_lists(aligned)
        results[name] = RunResult(
            "d",
            name,
            evaluator.evaluate_aligned(name, aligned, item_lists),
            np.full(len(users), "", dtype=object),
            {},
            item_lists,
            evaluator.system_measures,
        )
    settings = CompareSettings(system_resamples=50)
    (row,) = _system_rows("d", "all", results["a"], results["b"], np.array(users, dtype=object), settings)
    hand = {name: _hand_gini(by_user, trained) for name, by_user in lists.items()}
    assert hand["a"] != pytest.approx(_hand_gini(lists["a"], trained | {f"new{i:02d}" for i in range(12)}))  # it matters
    for name, result in results.items():
        (summary,) = system_summary(result, settings)
        assert summary["value"] == pytest.approx(hand[name], rel=1e-12)
    assert row["mean_a"] == pytest.approx(hand["a"], rel=1e-12)
    assert row["mean_a"] + row["delta"] == pytest.approx(hand["b"], rel=1e-12)
