"""How far a model judge's labels agree with people's, and what that does to the systems' numbers: the audit a team
runs before it trusts a judge (``harness agree``, :func:`harness.agree`).

Three views, each on what both sides judged:

* **labels**, on the documents both judged (:func:`~harness.evaluation.labels.label_agreement`): Cohen's kappa,
  quadratic-weighted kappa, Krippendorff's alpha with the ordinal metric, the confusion matrix (rows people's
  grades, columns the judge's), each side's rate of relevant labels and the agreement per query;
* **systems**, on the queries people judged: each run's measure under people's labels and under the judge's, the
  judge's bias (judge - people) with its paired t interval over those queries, and the bias relative to the other
  systems' (the judge *favours* a system whose bias is shown above the mean of the systems' biases: a uniform bias
  moves every system alike and reorders none);
* **rankings**: the systems ordered by each labelling, Kendall's tau (tau-b, as scipy's ``kendalltau``) and
  Yilmaz, Aslam and Robertson's tau_AP (SIGIR 2008: people's order is the truth, swaps near the top weigh more),
  the pairs that swap, and how often the paired t-test's verdict on a pair (better, worse or neither, at alpha) is
  the same under both labellings.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.data.model import Qrels, Run
from harness.errors import HarnessError
from harness.evaluation.evaluator import evaluate
from harness.evaluation.labels import LabelAgreement, label_agreement, refuse_missing
from harness.measures.conventions import Conventions
from harness.measures.spec import Measure
from harness.stats import paired
from harness.stats.ppi import Layers, PPIEstimate, layers_of, ppi_sampled, queries_needed

MIN_QUERIES = 2  # a paired interval over the queries people judged needs 2 or more


@dataclass(frozen=True)
class SystemBias:
    """One run's measure under each labelling on the queries people judged, and the judge's bias on it."""

    name: str
    measure: str
    human: float
    judge: float
    bias: float  # judge - human, the mean over the queries
    bias_low: float  # its two-sided (1 - alpha) paired t interval
    bias_high: float
    relative: float  # the bias less the mean of every system's bias (per query, then averaged)
    relative_low: float
    relative_high: float
    # over every query the judge labelled: the judge's value alone, and the prediction-powered one, which people's
    # queries (taken as a random sample) correct (harness.stats.ppi), with its (1 - alpha) interval and lambda
    judge_all: float = math.nan
    corrected: float = math.nan
    corrected_low: float = math.nan
    corrected_high: float = math.nan
    lam: float = math.nan

    @property
    def favoured(self) -> str:
        """ "favoured" when the judge's bias for this system is shown above the systems' mean bias, "disfavoured"
        when below, else ""."""
        return "favoured" if self.relative_low > 0 else "disfavoured" if self.relative_high < 0 else ""


@dataclass(frozen=True)
class RankingAgreement:
    """The systems ordered by one measure under each labelling."""

    measure: str
    human_order: tuple[str, ...]  # best first
    judge_order: tuple[str, ...]
    kendall_tau: float
    tau_ap: float
    swaps: tuple[tuple[str, str], ...]  # (a, b): people rank a above b, the judge b above a
    significance_agreement: float  # the share of pairs whose t-test verdict is the same under both labellings


@dataclass(frozen=True)
class PairCorrected:
    """Two systems' difference, ``b - a``, over every query the judge labelled: the judge's alone, and corrected by
    people's queries (PPI++ on the per-query differences, lambda tuned on them), with its two-sided (1 - alpha) t
    interval and p. ``people_needed``: about how many of the queries people would judge, the judge's labels kept,
    for that test to tell the two apart with 80% power if the true difference were the corrected one; None where
    not even all of them would, there is nothing to tell apart, or the sample is stratified (not planned)."""

    measure: str
    a: str
    b: str
    judge: float
    corrected: float
    low: float
    high: float
    p: float
    lam: float
    people_needed: int | None


@dataclass(frozen=True)
class Agreement:
    """``harness agree``'s audit: the labels, and with runs the systems' biases and the rankings."""

    labels: LabelAgreement
    systems: tuple[SystemBias, ...]
    rankings: tuple[RankingAgreement, ...]
    human_queries: int
    judge_queries: int
    alpha: float
    # how people's queries were drawn: at random from all of them, or at random within each of these strata (each
    # weighted by its share of the judge's queries)
    strata: tuple[str, ...] = ()
    pairs: tuple[PairCorrected, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "labels": self.labels.to_dict(),
            "systems": [{**s.__dict__, "favoured": s.favoured} for s in self.systems],
            "ranking": [
                {
                    "measure": r.measure,
                    "human_order": list(r.human_order),
                    "judge_order": list(r.judge_order),
                    "kendall_tau": r.kendall_tau,
                    "tau_ap": r.tau_ap,
                    "swaps": [list(s) for s in r.swaps],
                    "significance_agreement": r.significance_agreement,
                }
                for r in self.rankings
            ],
            "human_queries": self.human_queries,
            "judge_queries": self.judge_queries,
            "alpha": self.alpha,
            "sample": "stratified" if self.strata else "random",
            "strata": list(self.strata),
            "pairs": [p.__dict__ for p in self.pairs],
        }

    @property
    def sample_text(self) -> str:
        """How people's queries are taken to have been drawn, as the corrected values assume it."""
        if not self.strata:
            return "taken as a random sample"
        return f"a random sample within each of {len(self.strata)} strata, each weighted by its share of the queries"


def _paired_interval(differences: np.ndarray, alpha: float) -> tuple[float, float, float]:
    """(mean, low, high): the two-sided (1 - alpha) paired t interval of the mean of paired differences, from the
    comparisons' exact sums (:func:`harness.stats.paired.paired_t`); NaN bounds where they do not spread (an interval
    of width 0 from a sample would claim certainty) or fewer than 2 queries hold them."""
    t = paired.paired_t(differences, 1 - alpha)
    mean = float(t.mean[0]) if differences.size >= MIN_QUERIES else float(differences.mean())
    if not float(t.sd[0]) > 0:
        return mean, math.nan, math.nan
    return mean, float(t.ci_low[0]), float(t.ci_high[0])


def tau_ap(truth: Sequence[str], other: Sequence[str]) -> float:
    """Yilmaz, Aslam and Robertson's tau_AP of ``other`` against ``truth`` (both best first, the same items):
    2 / (N - 1) sum over ranks i >= 2 of ``other`` of C(i) / (i - 1), less 1, C(i) the items above rank i in
    ``other`` that ``truth`` also ranks above it.

    >>> truth = ["a", "b", "c", "d"]
    >>> tau_ap(truth, truth), round(tau_ap(truth, ["b", "a", "c", "d"]), 4)   # the top pair swapped: (0 + 1 + 1) 2/3 - 1
    (1.0, 0.3333)
    """
    place = {item: i for i, item in enumerate(truth)}
    n = len(other)
    if n < 2:
        return math.nan
    total = 0.0
    for i in range(1, n):
        total += sum(place[other[j]] < place[other[i]] for j in range(i)) / i
    return 2 * total / (n - 1) - 1


def _verdict(differences: np.ndarray, alpha: float) -> int:
    """The paired t-test's verdict on b - a: 1 better, -1 worse, 0 neither (or no spread: never significant)."""
    _, low, high = _paired_interval(differences, alpha)
    return 1 if low > 0 else -1 if high < 0 else 0


def agreement(
    human: Qrels,
    judge: Qrels,
    runs: Sequence[Run] = (),
    measures: Sequence[Measure] = (),
    conventions: Conventions | None = None,
    alpha: float = 0.05,
    strata: Mapping[str, str] | None = None,
) -> Agreement:
    """The audit of a judge: :func:`label_agreement`, and with ``runs`` each system's bias and the rankings under
    each labelling, on the queries people judged (see the module docstring). ``strata``: each query's stratum, when
    people's queries were drawn at random within strata rather than from all of them; the corrected values are then
    corrected stratum by stratum (:func:`~harness.stats.ppi.ppi_stratified`).

    Raises HarnessError where a query people judged has no label of the judge's (the judge must label every query),
    fewer than 2 queries were judged by people, or (with ``strata``) a query the judge labelled has no stratum or a
    stratum has fewer than 2 queries judged by people."""

    conventions = conventions or Conventions()
    labels = label_agreement(human, judge, conventions.relevance_level)
    human_queries = sorted(set(pc.unique(pc.cast(human.query_id, pa.string())).to_pylist()))
    judge_queries = set(pc.unique(pc.cast(judge.query_id, pa.string())).to_pylist())
    refuse_missing(
        [q for q in human_queries if q not in judge_queries],
        lambda q: f"{judge.source}: query {q!r} is judged by people and not by the judge",
        "the judge must label every query people judged (and every query evaluated)",
    )
    found: tuple[tuple[SystemBias, ...], tuple[RankingAgreement, ...], tuple[PairCorrected, ...]] = ((), (), ())
    if runs and measures:
        if len(human_queries) < MIN_QUERIES:
            raise HarnessError(
                f"people judged {len(human_queries)} query: a bias needs 2 or more", hint="judge more queries by people"
            )
        every = sorted(judge_queries)
        layers = strata_layers(every, set(human_queries), strata, judge.source) if strata is not None else None
        by_human = [evaluate(human, run, measures, conventions, query_ids=human_queries) for run in runs]
        by_judge = [evaluate(judge, run, measures, conventions, query_ids=every) for run in runs]
        people = np.isin(np.asarray(every, dtype=object), np.asarray(human_queries, dtype=object))
        found = systems_agreement(
            [run.name for run in runs],
            [str(m) for m in measures],
            np.array([t.values.T for t in by_human]),
            np.array([t.values.T for t in by_judge]),
            people,
            layers,
            alpha,
        )
    systems, rankings, corrected_pairs = found
    named = () if strata is None else tuple(sorted({strata[q] for q in judge_queries if q in strata}))
    return Agreement(
        labels, tuple(systems), tuple(rankings), len(human_queries), len(judge_queries), alpha, named, tuple(corrected_pairs)
    )


def systems_agreement(
    names: Sequence[str],
    measures: Sequence[str],
    human: np.ndarray,
    judge: np.ndarray,
    people: np.ndarray,
    layers: Layers | None,
    alpha: float,
) -> tuple[tuple[SystemBias, ...], tuple[RankingAgreement, ...], tuple[PairCorrected, ...]]:
    """Each system's bias, the rankings under each labelling and each pair corrected, from the values already had:
    ``human`` (systems x measures x people's queries) and ``judge`` (systems x measures x every query the judge
    labelled, sorted), ``people`` the mask of people's queries among the judge's (in the same order as ``human``'s)."""
    from scipy import stats

    systems: list[SystemBias] = []
    rankings: list[RankingAgreement] = []
    corrected_pairs: list[PairCorrected] = []
    for m, measure in enumerate(measures):
        h = human[:, m, :]  # systems x people's queries
        j_all = judge[:, m, :]  # systems x every query the judge labelled
        j = j_all[:, people]  # the same queries as h, in the same (sorted) order
        bias = j - h
        centred = bias - bias.mean(axis=0)
        for s in range(len(names)):
            b = _paired_interval(bias[s], alpha)
            r = _paired_interval(centred[s], alpha)
            corrected = _corrected(h[s], j_all[s], people, layers, alpha)
            systems.append(
                SystemBias(
                    names[s],
                    str(measure),
                    float(h[s].mean()),
                    float(j[s].mean()),
                    *b,
                    *r,
                    float(j_all[s].mean()),
                    *(
                        (corrected.estimate, corrected.low, corrected.high, corrected.lam)
                        if corrected is not None
                        else (math.nan,) * 4
                    ),
                )
            )
        for first, second in itertools.combinations(range(len(names)), 2):
            d_all = j_all[second] - j_all[first]
            found = _corrected(h[second] - h[first], d_all, people, layers, alpha)
            if found is not None:
                needed = (
                    None
                    if layers is not None
                    else queries_needed(h[second] - h[first], d_all[people], d_all, found.estimate, alpha, PLANNED_POWER)
                )
                corrected_pairs.append(
                    PairCorrected(
                        str(measure),
                        names[first],
                        names[second],
                        float(d_all.mean()),
                        found.estimate,
                        found.low,
                        found.high,
                        found.p,
                        found.lam,
                        needed,
                    )
                )
        human_order = tuple(names[i] for i in np.argsort(-h.mean(axis=1), kind="stable"))
        judge_order = tuple(names[i] for i in np.argsort(-j.mean(axis=1), kind="stable"))
        tau = float(stats.kendalltau(h.mean(axis=1), j.mean(axis=1)).statistic) if len(names) > 1 else math.nan
        place = {name: i for i, name in enumerate(judge_order)}
        swaps = tuple((a, b) for a, b in itertools.combinations(human_order, 2) if place[a] > place[b])
        pairs = list(itertools.combinations(range(len(names)), 2))
        same = [_verdict(h[b] - h[a], alpha) == _verdict(j[b] - j[a], alpha) for a, b in pairs]
        rankings.append(
            RankingAgreement(
                str(measure),
                human_order,
                judge_order,
                tau,
                tau_ap(human_order, judge_order),
                swaps,
                float(np.mean(same)) if same else math.nan,
            )
        )
    return tuple(systems), tuple(rankings), tuple(corrected_pairs)


PLANNED_POWER = 0.8  # what a pair's people_needed plans for


def strata_layers(every: list[str], human: set[str], strata: Mapping[str, str], source: str) -> Layers:
    """Each stratum's queries, as a mask over ``every`` (the judge's queries, sorted), and its weight (its share of
    them); refused, naming the query or the stratum, where a query has no stratum or people judged fewer than 2 of
    a stratum's queries."""
    refuse_missing(
        [q for q in every if q not in strata],
        lambda q: f"query {q!r} is labelled by the judge ({source}) and has no stratum",
        "give every query the judge labelled its stratum (the table's query and stratum columns)",
    )
    found = layers_of(np.asarray([strata[q] for q in every], dtype=object), np.asarray([q in human for q in every]))
    if isinstance(found, str):
        raise HarnessError(found, hint="have people judge more of its queries, or merge it with another stratum")
    return found


def _corrected(h: np.ndarray, j_all: np.ndarray, people: np.ndarray, layers: Layers | None, alpha: float) -> PPIEstimate | None:
    """A value over every query the judge labelled, corrected by people's (``h``, on the ``people`` queries): None
    where people judged every query (nothing is left to correct)."""
    return None if layers is None and not (~people).any() else ppi_sampled(h, j_all, people, layers, alpha)
