"""Expected exposure (Diaz et al., CIKM 2020; expeval, the TREC Fair Ranking reference): EE-L, EE-D, EE-R.

A system answers a query with a distribution over rankings, given as sampled permutations.
A document's exposure at 0-based rank i is p^i (``rbp``) or p^i (1 - u)^(relevant documents
above it) (``gerr``); ε is its mean over the samples. The target ε* shares the exposure each
relevance level leaves among that level's documents. Then EE-D = ‖ε‖² (disparity), EE-R =
ε·ε* (relevance) and EE-L = ‖ε - ε*‖² (loss; lower is better). With groups, ε and ε* are
summed per group first. Normalised values are expeval's (x - lb) / (ub - lb), with its bounds.

Pure functions over one query's judgments and samples (dicts: a query has tens of documents).

>>> target = target_exposure({"a": 1}, "rbp", 0.5, 0.5)    # the one relevant document: rank 1's exposure
>>> target
{'a': 1.0}
>>> run = expected_exposure({"0": ["a", "b"], "1": ["b", "a"]}, {"a": 1}, "rbp", 0.5, 0.5)   # a at ranks 1 and 2
>>> run, measures(target, run)
({'a': 0.75, 'b': 0.75}, {'EE-D': 1.125, 'EE-R': 0.75, 'EE-L': 0.625})
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

UserModel = str  # "gerr" | "rbp"


def geometric_series(p: float, n: float) -> float:
    """sum of p^i for i < n (n may be infinite)."""
    return 1.0 / (1.0 - p) if n == math.inf else (1.0 - p**n) / (1.0 - p)


def target_exposure(judged: Mapping[str, float], model: UserModel, p: float, u: float) -> dict[str, float]:
    """ε*: each relevance level, best first, shares equally the exposure of the ranks it would fill."""
    counts: dict[float, int] = {}
    for rel in judged.values():
        counts[rel] = counts.get(rel, 0) + 1
    above, per_level = 0, {}
    for grade, m in sorted(counts.items(), reverse=True):
        if model == "rbp":
            share = (p**above - p ** (above + m)) / (m * (1.0 - p))
        elif grade > 0:
            pp = p * (1.0 - u)
            share = (pp**above - pp ** (above + m)) / (m * (1.0 - pp))
        else:
            share = ((1.0 - u) ** above * (p**above - p ** (above + m))) / (m * (1.0 - p))
        per_level[grade] = share
        above += m
    return {doc: per_level[rel] for doc, rel in judged.items()}


def expected_exposure(
    samples: Mapping[str, Sequence[str]], judged: Mapping[str, float], model: UserModel, p: float, u: float
) -> dict[str, float]:
    """ε: each document's exposure averaged over the sampled rankings (each a list of documents, best first)."""
    out: dict[str, float] = {}
    for ranking in samples.values():
        relevant_above = 0
        for i, doc in enumerate(ranking):
            exposure = p**i if model == "rbp" else p**i * (1.0 - u) ** relevant_above
            out[doc] = out.get(doc, 0.0) + exposure / len(samples)
            if judged.get(doc, 0) > 0:
                relevant_above += 1
    return out


def by_group(
    exposure: Mapping[str, float], groups: Mapping[str, Sequence[str]], judged: Mapping[str, float], complete: bool
) -> dict[str, float]:
    """Exposure summed per group over the judged documents (relevant ones only unless ``complete``); a document in
    two groups counts in both."""
    out: dict[str, float] = {}
    for doc, names in groups.items():
        if complete or judged.get(doc, 0) > 0:
            for name in names:
                out[name] = out.get(name, 0.0) + exposure.get(doc, 0.0)
    return out


def measures(target: Mapping[str, float], run: Mapping[str, float], zero_is_inf: bool = False) -> dict[str, float]:
    """EE-D, EE-R, EE-L of one query; ``zero_is_inf``: expeval's EE-D of an all-zero exposure vector (inf)."""
    disparity = sum(v * v for v in run.values())
    if zero_is_inf and disparity <= 0:
        disparity = math.inf
    relevance = sum(v * run[k] for k, v in target.items() if k in run)
    loss = sum((target.get(k, 0.0) - run.get(k, 0.0)) ** 2 for k in sorted(set(target) | set(run)))
    return {"EE-D": disparity, "EE-R": relevance, "EE-L": loss}


def bounds(
    target: Mapping[str, float], judged: Mapping[str, float], model: UserModel, p: float, u: float, complete: bool, grouped: bool
) -> dict[str, tuple[float, float, float]]:
    """expeval's (lower bound, upper bound, value when they are equal) of each measure, for normalisation.

    Kept as expeval has them, its bugs included (docs/fairness.md): the group relevance's upper bound
    is always 0 (so its normalised value is always 1), and the group disparity's lower bound is not one.
    """
    pp = p if model == "rbp" else p * u
    squares = sum(e * e for e in target.values())
    if grouped:
        relevant = sum(1 for v in judged.values() if v > 0)
        k = len(target)
        mass = geometric_series(p, relevant)
        disparity = (0.0, 0.0) if k == 1 else (k * geometric_series(pp, relevant) ** 2, mass * mass * k)
        spread = sum((mass - e) ** 2 for e in target.values())
        return {"EE-D": (*disparity, 0.0), "EE-R": (0.0, 0.0, 1.0), "EE-L": (0.0, max(squares, spread), 0.0)}
    n = len(judged) if complete else math.inf
    ascending = sorted(target.values())
    levels = len(set(judged.values()))
    relevance_lb = 0.0 if n == math.inf else sum(pp**i * e for i, e in enumerate(ascending))
    relevance = (0.0, 0.0) if levels <= 1 else (relevance_lb, squares)
    disparity = (0.0 if n == math.inf else geometric_series(pp, n) ** 2 / n, geometric_series(p * p, n))
    loss_ub = squares + geometric_series(pp, n) if n == math.inf else sum((pp**i - e) ** 2 for i, e in enumerate(ascending))
    return {"EE-D": (*disparity, 0.0), "EE-R": (*relevance, 1.0), "EE-L": (0.0, loss_ub, 0.0)}


def normalised(value: float, bound: tuple[float, float, float]) -> float:
    low, high, default = bound
    return default if low == high else (value - low) / (high - low)


def user_model_problem(p: float, u: float) -> str | None:
    """What is wrong with a user model's patience ``p`` and satisfaction chance ``u`` (None: nothing).

    >>> user_model_problem(0.5, 0.5), user_model_problem(1.0, 0.5)
    (None, 'patience p must lie in (0, 1) and u in [0, 1), got p=1, u=0.5')
    """
    return None if 0 < p < 1 and 0 <= u < 1 else f"patience p must lie in (0, 1) and u in [0, 1), got p={p:g}, u={u:g}"


def query_values(
    judged: Mapping[str, float],
    samples: Mapping[str, Sequence[str]] | None,
    model: UserModel,
    p: float,
    u: float,
    complete: bool = False,
    normalized: bool = False,
    expeval: bool = False,
    groups: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, float]:
    """EE-D, EE-R, EE-L of one query: its target from ``judged`` ({doc: grade}, with a relevant one), its exposure
    from ``samples`` (None or empty: the run misses the query; no exposure, or with ``expeval`` expeval's values
    there: EE-D's upper bound, EE-R's lower bound, EE-R's upper bound for EE-L, and its inf for an all-zero
    exposure vector). ``groups`` ({doc: its groups}): exposures summed per group first (expeval -G).
    ``normalized``: expeval's (x - lb) / (ub - lb).

    >>> query_values({"a": 1}, {"0": ["a", "b"], "1": ["b", "a"]}, "rbp", 0.5, 0.5)
    {'EE-D': 1.125, 'EE-R': 0.75, 'EE-L': 0.625}
    """
    target = target_exposure(judged, model, p, u)
    if groups is not None:
        target = by_group(target, groups, judged, complete)
    limits = bounds(target, judged, model, p, u, complete, groups is not None)
    if expeval and not samples:
        values = {"EE-D": limits["EE-D"][1], "EE-R": limits["EE-R"][0], "EE-L": limits["EE-R"][1]}
    else:
        got = expected_exposure(samples, judged, model, p, u) if samples else {}
        if groups is not None:
            got = by_group(got, groups, judged, complete)
        values = measures(target, got, zero_is_inf=expeval)
    if normalized:
        values = {name: normalised(v, limits[name]) for name, v in values.items()}
    return values


@dataclass(frozen=True, eq=False)
class SampleData:
    """The expected-exposure measures' view of a run: per query (the lists' order) its sampled rankings ({sample:
    documents best first}, :func:`harness.data.samples.sample_rankings`), and the judged documents' ids (parallel
    to the lists' ``judged_label``)."""

    rankings: tuple[dict[str, list[str]], ...]
    judged_docs: list[str]
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False)


MEASURES = ("EE-D", "EE-R", "EE-L")


def per_query(
    lists: Any, model: UserModel, p: float, u: float, complete: bool, normalized: bool, expeval: bool = False
) -> np.ndarray:
    """(queries x 3): EE-D, EE-R, EE-L of each query of the lists (:class:`harness.kernels._segments.RankedLists`
    with ``samples``); NaN for a query without a relevant document (no target to approach). A query the run
    misses has no exposure: EE-D 0, EE-R 0, EE-L = ||target||^2.

    Relevant documents (label >= the relevance level) keep their grade; ``complete`` adds the other judged
    documents at grade 0 to the target (expeval -C); ``normalized`` and ``expeval`` as :func:`query_values`.
    """
    data: SampleData = lists.samples
    key = (model, p, u, complete, normalized, expeval, lists.relevance_level)
    if key in data._cache:
        return data._cache[key]  # type: ignore[no-any-return]
    level = lists.relevance_level
    out = np.full((lists.n_queries, 3), np.nan)
    offsets, labels = lists.judged_offsets, lists.judged_label
    for q in range(lists.n_queries):
        judged: dict[str, float] = {}
        rows = range(int(offsets[q]), int(offsets[q + 1]))
        for row in sorted(rows, key=data.judged_docs.__getitem__):  # by document id: sums in an order of the query alone
            label = float(labels[row])
            if label >= level:
                judged[data.judged_docs[row]] = label
            elif complete and label >= 0:
                judged[data.judged_docs[row]] = 0.0
        if not any(v > 0 for v in judged.values()):
            continue
        values = query_values(judged, data.rankings[q], model, p, u, complete, normalized, expeval)
        out[q] = [values[name] for name in MEASURES]
    data._cache[key] = out
    return out
