"""Every comparison a reviewer asks for: pairs x measures x segments -> one table.

For each (dataset, segment, measure, pair): both means, the difference b - a, its
95% CIs (t and bootstrap), the p-value of every configured test, the same p-values
corrected within their family, whether the primary test's corrected p is below
alpha, the effect size (d_z), and win/tie/loss counts over queries (a win is a query
where b is better, in the measure's direction). For three systems or more, a
two-way ANOVA and a randomised Tukey HSD per measure.

Families for correction: ``per_measure`` = the pairs of one (dataset, segment,
measure); ``grid`` = every pair x measure x dataset of a segment.
Pairs are tested over the queries both systems were evaluated on (all judged
queries under the default ``queries: qrels``).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure
from harness.results import RunResult
from harness.stats import paired
from harness.stats.anova import randomized_tukey_hsd, two_way_anova
from harness.stats.correction import correct

FEW_QUERIES = 5  # below this a comparison is reported but flagged


@dataclass(frozen=True)
class CompareSettings:
    tests: tuple[str, ...] = ("t", "wilcoxon", "randomization", "bootstrap")
    primary: str = "randomization"
    correction: str = "holm"
    family: str = "per_measure"
    mode: str = "baseline"
    alpha: float = 0.05
    permutations: int = 10_000
    resamples: int = 10_000
    seed: int = 20261121
    baseline: str | None = None
    extra_pairs: tuple[tuple[str, str], ...] = ()  # always tested, e.g. the release's production vs candidate


def _pairs(systems: list[str], settings: CompareSettings) -> list[tuple[str, str]]:
    if settings.mode == "baseline" and settings.baseline in systems:
        pairs = [(settings.baseline, s) for s in systems if s != settings.baseline]
    else:
        pairs = list(combinations(systems, 2))
    for a, b in settings.extra_pairs:
        if a in systems and b in systems and (a, b) not in pairs and (b, a) not in pairs:
            pairs.append((a, b))
    return pairs


def _segment_queries(result: RunResult, segment: str) -> set[str]:
    mask = dict(result.segment_masks()).get(segment)
    return set() if mask is None else set(result.per_query.query_ids[mask].tolist())


def _rows(result: RunResult, queries: np.ndarray) -> np.ndarray:
    """Row of each of ``queries`` (ids all evaluated by the run) in the run's per-query table."""
    ids = result.per_query.query_ids.astype(str)
    order = np.argsort(ids)
    return order[np.searchsorted(ids[order], queries.astype(str))]


def compare(
    results: list[RunResult], measures: tuple[Measure, ...], settings: CompareSettings
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(comparison rows, anova rows), in dataset, segment, measure, pair order."""
    rows: list[dict[str, Any]] = []
    anova_rows: list[dict[str, Any]] = []
    datasets = list(dict.fromkeys(r.dataset for r in results))
    for d_index, dataset in enumerate(datasets):
        by_system = {r.system: r for r in results if r.dataset == dataset}
        systems = list(by_system)
        if len(systems) < 2:
            continue
        reference = by_system[systems[0]]
        for s_index, (segment, _) in enumerate(reference.segment_masks()):
            shared = {s: _segment_queries(by_system[s], segment) for s in systems}
            pair_list = _pairs(systems, settings)
            # one diffs row per (pair, measure); rows grouped by query count so that each group is one matrix
            groups: dict[int, list[tuple[tuple[str, str], Measure, np.ndarray, np.ndarray, np.ndarray]]] = {}
            for a, b in pair_list:
                queries = np.array(sorted(shared[a] & shared[b]), dtype=object)
                rows_a, rows_b = _rows(by_system[a], queries), _rows(by_system[b], queries)  # once per pair
                for measure in measures:
                    va = by_system[a].per_query.column(measure)[rows_a]
                    vb = by_system[b].per_query.column(measure)[rows_b]
                    groups.setdefault(len(queries), []).append(((a, b), measure, va, vb, queries))
            for g_index, (n, items) in enumerate(sorted(groups.items())):
                diffs = np.array([vb - va for _, _, va, vb, _ in items]).reshape(len(items), n)
                rows.extend(_test_block(dataset, segment, items, diffs, settings, [settings.seed, d_index, s_index, g_index]))
            if len(systems) >= 3:
                common = set.intersection(*shared.values())
                queries = np.array(sorted(common), dtype=object)
                if len(queries) >= 2:
                    at = {s: _rows(by_system[s], queries) for s in systems}
                    data = np.array([[by_system[s].per_query.column(m)[at[s]] for s in systems] for m in measures])
                    rng = np.random.default_rng([settings.seed, d_index, s_index, 1000])
                    tukey_all = randomized_tukey_hsd(data, rng, settings.permutations)
                    position = {s: i for i, s in enumerate(systems)}
                    for m_index, measure in enumerate(measures):
                        x = data[m_index]
                        result = two_way_anova(x)
                        tukey = tukey_all[m_index]
                        anova_rows.append(
                            {"dataset": dataset, "segment": segment, "measure": str(measure), "systems": len(systems),
                             "n_queries": len(queries), "F": result.f, "p": result.p, "df_systems": result.df_systems,
                             "df_residual": result.df_residual, "residual_variance": result.residual_variance}
                        )  # fmt: skip
                        for row in rows:
                            if row["dataset"] == dataset and row["segment"] == segment and row["measure"] == str(measure):
                                row["p_tukey_hsd"] = float(tukey[position[row["system_a"]], position[row["system_b"]]])
    _correct(rows, settings)
    return rows, anova_rows


def _test_block(
    dataset: str,
    segment: str,
    items: list[tuple[tuple[str, str], Measure, np.ndarray, np.ndarray, np.ndarray]],
    diffs: np.ndarray,
    settings: CompareSettings,
    seed: list[int],
) -> list[dict[str, Any]]:
    n = diffs.shape[1]
    t = paired.paired_t(diffs)
    p: dict[str, np.ndarray] = {}
    if "t" in settings.tests:
        p["t"] = t.p
    if "wilcoxon" in settings.tests:
        p["wilcoxon"] = paired.wilcoxon(diffs)
    boot = paired.bootstrap(diffs, np.random.default_rng([*seed, 2]), settings.resamples)
    if "randomization" in settings.tests:
        p["randomization"] = paired.randomization(diffs, np.random.default_rng([*seed, 1]), settings.permutations)
    if "bootstrap" in settings.tests:
        p["bootstrap"] = boot.p
    effect = paired.effect_size(diffs)
    wins, ties, losses = paired.win_tie_loss(diffs)
    out = []
    for i, ((a, b), measure, va, vb, _) in enumerate(items):
        higher = REGISTRY.definition(measure).higher_is_better
        row: dict[str, Any] = {
            "dataset": dataset, "segment": segment, "measure": str(measure), "system_a": a, "system_b": b,
            "mean_a": float(va.mean()) if n else float("nan"), "mean_b": float(vb.mean()) if n else float("nan"),
            "delta": float(diffs[i].mean()) if n else float("nan"),
            "ci_low_t": float(t.ci_low[i]), "ci_high_t": float(t.ci_high[i]),
            "ci_low_bootstrap": float(boot.ci_low[i]), "ci_high_bootstrap": float(boot.ci_high[i]),
            "effect_size": float(effect[i]), "higher_is_better": higher,
            "wins": int(wins[i] if higher else losses[i]), "ties": int(ties[i]), "losses": int(losses[i] if higher else wins[i]),
            "n_queries": n, "few_queries": n < FEW_QUERIES, "p_tukey_hsd": float("nan"),
        }  # fmt: skip
        for test in settings.tests:
            row[f"p_{test}"] = float(p[test][i])
        out.append(row)
    return out


def _correct(rows: list[dict[str, Any]], settings: CompareSettings) -> None:
    def family(row: dict[str, Any]) -> tuple[str, ...]:
        if settings.family == "grid":
            return (row["segment"],)
        return (row["dataset"], row["segment"], row["measure"])

    families: dict[tuple[str, ...], list[int]] = {}
    for i, row in enumerate(rows):
        families.setdefault(family(row), []).append(i)
    for members in families.values():
        for test in settings.tests:
            adjusted = correct(np.array([rows[i][f"p_{test}"] for i in members]), settings.correction)
            for i, value in zip(members, adjusted.tolist(), strict=True):
                rows[i][f"p_{test}_adj"] = value
    resampling = settings.primary in ("randomization", "bootstrap")
    smallest = 1 / ((settings.permutations if settings.primary == "randomization" else settings.resamples) + 1)
    for members in families.values():
        # The smallest p a resampling test can give is 1/(B+1); corrected over the family it may not reach alpha.
        limited = resampling and settings.correction != "none" and smallest * len(members) >= settings.alpha
        for i in members:
            rows[i]["resolution_limited"] = bool(limited)
    for row in rows:
        p_adj = row[f"p_{settings.primary}_adj"]
        row["p_adj"] = p_adj
        row["significant"] = bool(p_adj == p_adj and p_adj < settings.alpha and row["n_queries"] >= 2)
        row.update(
            {"primary_test": settings.primary, "correction": settings.correction, "family": settings.family,
             "alpha": settings.alpha, "permutations": settings.permutations, "resamples": settings.resamples,
             "seed": settings.seed}
        )  # fmt: skip
