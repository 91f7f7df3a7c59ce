"""People's labels and a judge's on the documents both judged: how far they agree (:func:`label_agreement`).

Cohen's kappa, quadratic-weighted kappa (the grades' places on the scale, as scikit-learn's ``cohen_kappa_score``
weighs them), Krippendorff's alpha with the ordinal metric, the confusion matrix (rows people's grades, columns the
judge's), each side's rate of relevant labels and the agreement per query. Krippendorff's alpha for two coders and
no missing label: with the coincidence matrix o (each pair counted both ways), its margins n_c and n = 2 x pairs,
alpha = 1 - (n - 1) sum o_ck d_ck / sum n_c n_k d_ck, where the ordinal d_ck = (sum of n_g for g from c to k -
(n_c + n_k) / 2)^2.

>>> from harness import Qrels
>>> human = Qrels.from_dict({"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"d": 1, "e": 0}})
>>> judge = Qrels.from_dict({"q1": {"a": 2, "b": 1, "c": 1}, "q2": {"d": 1, "e": 0}})
>>> found = label_agreement(human, judge)
>>> found.pairs, round(found.cohen_kappa, 4), found.confusion.tolist()
(5, 0.6875, [[1, 1, 0], [0, 2, 0], [0, 0, 1]])
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.data.model import Qrels
from harness.errors import HarnessError


class NoSharedLabels(HarnessError):
    """No document is labelled both by people and by the judge: their labels cannot be compared (their queries'
    values still can)."""


@dataclass(frozen=True)
class QueryAgreement:
    """One query's documents both judged: how many, the share with equal grades, each side's share relevant."""

    query: str
    pairs: int
    agree: float
    human_relevant: float
    judge_relevant: float


@dataclass(frozen=True)
class LabelAgreement:
    """The labels on the documents both judged (see the module docstring)."""

    pairs: int
    grades: tuple[float, ...]  # the scale: every grade either side gave, ascending
    confusion: np.ndarray  # (grades x grades) counts: rows people's grade, columns the judge's
    cohen_kappa: float
    weighted_kappa: float
    krippendorff_alpha: float
    human_relevant: float  # the share of the pairs people call relevant (grade >= the relevance level)
    judge_relevant: float
    per_query: tuple[QueryAgreement, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs": self.pairs,
            "grades": list(self.grades),
            "cohen_kappa": self.cohen_kappa,
            "weighted_kappa": self.weighted_kappa,
            "krippendorff_alpha": self.krippendorff_alpha,
            "human_relevant": self.human_relevant,
            "judge_relevant": self.judge_relevant,
            "confusion": self.confusion.tolist(),
            "per_query": [q.__dict__ for q in self.per_query],
        }


def _table(qrels: Qrels) -> pa.Table:
    return pa.table(
        {
            "query": pc.cast(qrels.query_id, pa.string()),
            "doc": pc.cast(qrels.doc_id, pa.string()),
            "grade": pa.array(qrels.relevance, pa.float64()),
        }
    )


def _check_unique(table: pa.Table, source: str) -> None:
    counts = table.group_by(["query", "doc"]).aggregate([("grade", "count")])
    repeated = counts.filter(pc.greater(counts["grade_count"], 1))
    if len(repeated):
        query, doc = repeated["query"][0].as_py(), repeated["doc"][0].as_py()
        raise HarnessError(
            f"{source}: query {query!r} labels document {doc!r} more than once: which label is meant is unknown",
            hint="keep one label per query and document",
        )


def map_grades(judge: Qrels, grades: Mapping[float, float]) -> Qrels:
    """The judge's labels on people's scale: each grade ``g`` of ``grades`` becomes ``grades[g]``, the others stay.

    >>> from harness import Qrels
    >>> map_grades(Qrels.from_dict({"q": {"a": 3, "b": 1}}), {3: 2}).relevance.tolist()
    [2.0, 1.0]
    """
    mapped = judge.relevance.copy()
    for old, new in grades.items():
        mapped[judge.relevance == old] = new
    return Qrels(judge.query_id, judge.doc_id, mapped, judge.source, judge.file_rows)


def foreign_grade(human: Qrels, judge: Qrels) -> tuple[str, str, float, tuple[float, ...]] | None:
    """The judge's first label, in its file's order, with a grade people never give, as (query, document, grade,
    people's grades ascending); None where every grade of the judge's is on people's scale.

    >>> foreign_grade(Qrels.from_dict({"q": {"a": 0, "b": 1}}), Qrels.from_dict({"q": {"a": 1, "b": 3}}))
    ('q', 'b', 3.0, (0.0, 1.0))
    """
    scale = np.unique(human.relevance)
    foreign = np.flatnonzero(~np.isin(judge.relevance, scale))
    if not foreign.size:
        return None
    at = int(foreign[0])
    query, doc = str(judge.query_id[at].as_py()), str(judge.doc_id[at].as_py())
    return query, doc, float(judge.relevance[at]), tuple(float(g) for g in scale)


def label_agreement(human: Qrels, judge: Qrels, relevance_level: float = 1) -> LabelAgreement:
    """The agreement of the labels on the documents both judged (see the module docstring).

    Raises HarnessError when no document was judged by both, when either side labels a document twice, or when the
    judge gives a grade people never gave (different scales: map them first, :func:`map_grades`)."""
    people, model = _table(human), _table(judge)
    _check_unique(people, human.source)
    _check_unique(model, judge.source)
    foreign = foreign_grade(human, judge)
    if foreign is not None:
        query, _, grade, grades = foreign
        scale = ", ".join(f"{g:g}" for g in grades)
        raise HarnessError(
            f"{judge.source}: the judge gives query {query!r} a grade of {grade:g}, which people never give (their "
            f"grades: {scale}): the two scales differ, so their labels cannot be compared",
            hint=f"map the judge's grades onto people's: --judge-grades {grade:g}=G (judge_grades={{{grade:g}: G}})",
        )
    both = people.join(model, ["query", "doc"], join_type="inner", left_suffix="_human", right_suffix="_judge")
    if not len(both):
        raise NoSharedLabels(
            f"no document is labelled both in {human.source} and in {judge.source}",
            hint="give the judge the documents people judged (the same query and document ids)",
        )
    both = both.sort_by([("query", "ascending"), ("doc", "ascending")])
    h, j = both["grade_human"].to_numpy(), both["grade_judge"].to_numpy()
    levels = np.unique(np.concatenate([h, j]))
    grades = tuple(float(g) for g in levels)
    k = len(grades)
    confusion = np.zeros((k, k), dtype=np.int64)
    np.add.at(confusion, (np.searchsorted(levels, h), np.searchsorted(levels, j)), 1)
    # the pairs are sorted by query: each query's pairs are one run of rows, summed at its start
    queries = both["query"].to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(np.concatenate([[True], queries[1:] != queries[:-1]]))
    counts = np.diff(np.append(starts, queries.size))

    def share(hits: np.ndarray) -> np.ndarray:
        return np.add.reduceat(hits.astype(np.float64), starts) / counts

    same, human_relevant, judge_relevant = share(h == j), share(h >= relevance_level), share(j >= relevance_level)
    per_query = [
        QueryAgreement(str(queries[start]), int(count), float(a), float(p), float(m))
        for start, count, a, p, m in zip(starts, counts, same, human_relevant, judge_relevant, strict=True)
    ]
    return LabelAgreement(
        int(h.size),
        grades,
        confusion,
        _kappa(confusion, quadratic=False),
        _kappa(confusion, quadratic=True),
        _ordinal_alpha(confusion),
        float(np.mean(h >= relevance_level)),
        float(np.mean(j >= relevance_level)),
        tuple(per_query),
    )


def _kappa(confusion: np.ndarray, quadratic: bool) -> float:
    """Cohen's kappa from the confusion matrix: 1 - sum w O / sum w E, w the disagreement weights (0/1, or the
    squared distance of the grades' places on the scale), E the margins' product over N."""
    k = confusion.shape[0]
    observed = confusion / confusion.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    places = np.arange(k)
    weights = (places[:, None] - places[None, :]) ** 2 if quadratic else (places[:, None] != places[None, :])
    chance = float((weights * expected).sum())
    if chance == 0:  # one grade on both sides: agreement is perfect and chance explains all of it
        return math.nan
    return 1.0 - float((weights * observed).sum()) / chance


def _ordinal_alpha(confusion: np.ndarray) -> float:
    """Krippendorff's alpha, ordinal metric, two coders, no missing label (the module docstring's formula)."""
    coincidence = (confusion + confusion.T).astype(np.float64)  # each pair counted both ways
    margins = coincidence.sum(axis=1)
    n = margins.sum()
    k = len(margins)
    distance = np.zeros((k, k))
    for c, e in itertools.combinations(range(k), 2):
        distance[c, e] = distance[e, c] = (margins[c : e + 1].sum() - (margins[c] + margins[e]) / 2) ** 2
    expected = float((np.outer(margins, margins) * distance).sum())
    if expected == 0:
        return math.nan
    return 1.0 - (n - 1) * float((coincidence * distance).sum()) / expected


def refuse_missing(missing: Sequence[str], message: Callable[[str], str], hint: str, path: Path | None = None) -> None:
    """The error naming the first of the ``missing`` queries (``message`` of it), and how many there are.

    >>> try:
    ...     refuse_missing(["q2", "q5"], lambda q: f"query {q!r} has no stratum", "give it one")
    ... except HarnessError as exc:
    ...     print(exc.message)
    query 'q2' has no stratum (2 such queries)
    """
    if missing:
        count = f" ({len(missing):,} such queries)" if len(missing) > 1 else ""
        raise HarnessError(message(missing[0]) + count, path=path, hint=hint)
