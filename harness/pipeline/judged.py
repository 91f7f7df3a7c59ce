"""A dataset with a model judge (``judge:``): its runs evaluated under the judge's labels of every query and under
people's of the queries they judged, after checking that people's labels can correct the judge's.

Each run's two evaluations become one :class:`~harness.evaluation.results.RunResult`: ``per_query`` the judge's
values, ``people`` people's, ``strata`` each query's stratum for a stratified sample. The comparisons and the gate
correct the judge's values by people's (:mod:`harness.comparison.judged`, :mod:`harness.stats.ppi`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from harness.config.schema import Dataset, Judge, TableColumns
from harness.data.load import load_qrels
from harness.data.model import Qrels
from harness.data.tables import read_table_columns
from harness.engines._common import qrels_columns
from harness.errors import HarnessError
from harness.evaluation.labels import (
    LabelAgreement,
    NoSharedLabels,
    foreign_grade,
    label_agreement,
    map_grades,
    refuse_missing,
)
from harness.evaluation.results import RunResult
from harness.progress import Progress
from harness.stats.ppi import MIN_HUMAN


@dataclass(frozen=True)
class Labellings:
    """A judged dataset as two datasets: under the judge's labels (``judge``) and under people's (``people``), with
    each query's stratum where people's queries were drawn within strata, and the judge's name."""

    judge: Dataset
    people: Dataset
    strata: Mapping[str, str] | None
    name: str
    labels: LabelAgreement | None


def labellings(dataset: Dataset, scratch: Path, progress: Progress) -> Labellings:
    """The dataset under each labelling, refused with the query at fault where people's labels cannot correct the
    judge's: a query people judged that the judge did not, a grade of the judge's people never give (``grades:``
    maps them), fewer than 2 queries judged by people, a query the judge labelled without a stratum. Where the
    judge's grades are mapped, its mapped labels are written to ``scratch`` (the engines read a file)."""
    judge = dataset.judge
    assert judge is not None
    progress(f"loading people's qrels {dataset.qrels} and the judge's {judge.qrels}")
    people = load_qrels(dataset.qrels, qrels_columns(dataset.qrels_columns), dataset.qrels_format)
    model = load_qrels(judge.qrels, qrels_columns(judge.columns), judge.qrels_format)
    if not isinstance(people, Qrels) or not isinstance(model, Qrels):
        raise HarnessError(
            f"dataset {dataset.name!r}: a judge's labels correct graded qrels, not subtopic judgments (format: ndeval)",
            path=dataset.qrels,
            hint="remove judge: from this dataset",
        )
    if judge.grades:
        model = map_grades(model, dict(judge.grades))
    _check(dataset, judge, people, model)
    strata = _strata(judge, model) if judge.strata is not None else None
    if judge.grades:
        path = scratch / f"{dataset.name}-judge.parquet"
        pq.write_table(
            pa.table(
                {
                    "query": pc.cast(model.query_id, pa.string()),
                    "doc": pc.cast(model.doc_id, pa.string()),
                    "relevance": model.relevance,
                }
            ),
            path,
        )
        by_judge = dataclasses.replace(
            dataset, qrels=path, qrels_format="parquet", qrels_columns=TableColumns(value="relevance"), judge=None
        )
    else:
        by_judge = dataclasses.replace(
            dataset, qrels=judge.qrels, qrels_format=judge.qrels_format, qrels_columns=judge.columns, judge=None
        )
    try:
        labels: LabelAgreement | None = label_agreement(people, model, dataset.relevance_level)
    except NoSharedLabels:  # other documents judged (another pool): the queries' values are still corrected
        labels = None
    return Labellings(by_judge, dataclasses.replace(dataset, judge=None), strata, judge.name, labels)


def _queries(qrels: Qrels) -> set[str]:
    return set(pc.unique(pc.cast(qrels.query_id, pa.string())).to_pylist())


def _check(dataset: Dataset, judge: Judge, people: Qrels, model: Qrels) -> None:
    people_queries, judge_queries = _queries(people), _queries(model)
    refuse_missing(
        sorted(people_queries - judge_queries),
        lambda q: f"query {q!r} is judged by people ({dataset.qrels}) and not by the judge",
        "the judge must label every query people judged, and every query evaluated",
        judge.qrels,
    )
    if len(people_queries) < MIN_HUMAN:
        raise HarnessError(
            f"people judged {len(people_queries)} quer{'y' if len(people_queries) == 1 else 'ies'} of dataset "
            f"{dataset.name!r}: correcting the judge's values needs {MIN_HUMAN} or more",
            path=dataset.qrels,
            hint="have people judge a random sample of the queries (dozens or more: harness plan says how many)",
        )
    foreign = foreign_grade(people, model)
    if foreign is not None:
        query, doc, grade, scale = foreign
        raise HarnessError(
            f"query {query!r}, document {doc!r}: the judge's grade {grade:g} is one people never give (their grades: "
            f"{', '.join(f'{g:g}' for g in scale)}): the two scales differ",
            path=judge.qrels,
            hint=f"map the judge's grades onto people's: judge: {{grades: {{{grade:g}: <people's grade>}}}}",
        )


def _strata(judge: Judge, model: Qrels) -> dict[str, str]:
    """Each query's stratum, refused naming the first query the judge labelled that has none."""
    assert judge.strata is not None
    spec = judge.strata
    strata = read_table_columns(spec.path, spec.query_column, spec.segment_column)
    refuse_missing(
        sorted(_queries(model) - strata.keys()),
        lambda q: f"query {q!r} is labelled by the judge ({judge.qrels}) and has no stratum",
        "give every query the judge labelled its stratum (the table's query and stratum columns)",
        spec.path,
    )
    return strata


def joined(by_judge: list[RunResult], by_people: list[RunResult], labelled: Labellings) -> list[RunResult]:
    """Each run's judge's result with people's values (and the strata) beside its own."""
    out = []
    for judge_result, people_result in zip(by_judge, by_people, strict=True):
        assert (judge_result.system, judge_result.seed) == (people_result.system, people_result.seed)
        strata = None if labelled.strata is None else _strata_of(judge_result, labelled.strata)
        out.append(
            dataclasses.replace(
                judge_result, people=people_result.per_query, strata=strata, judge=labelled.name, labels=labelled.labels
            )
        )
    return out


def _strata_of(result: RunResult, strata: Mapping[str, str]) -> np.ndarray:
    """Each of a run's evaluated queries' stratum, refused naming the first query without one."""
    queries = result.per_query.query_ids.astype(str)
    refuse_missing(
        [q for q in queries if q not in strata],
        lambda q: f"query {q!r} of {result.system}'s run is evaluated on dataset {result.dataset!r} and has no stratum",
        "give every query evaluated its stratum, or evaluate the judge's queries only (conventions: {queries: qrels})",
    )
    return np.asarray([strata[q] for q in queries], dtype=object)
