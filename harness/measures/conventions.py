"""Every convention on which evaluation tools disagree, decided in one place.

Each option is named, and its default is trec_eval 10.0's behaviour, written beside
it, with one deliberate exception: every judged query counts (``queries="qrels"``,
trec_eval's ``-c``), because silently dropping a judged query that a system did not
answer rewards systems that return nothing for hard queries.
See ``docs`` in the README and ``../shared/docs/semantics.md`` for the peers' choices.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import Enum, StrEnum
from functools import cache

from harness.errors import ConventionError


class Ties(StrEnum):
    """How documents with equal scores are ordered."""

    TREC_EVAL = "trec_eval"  # score desc, then docno desc in byte order (form_res_rels.c)
    INPUT_ORDER = "input_order"  # score desc, then the order of lines in the run file (MS Recommenders)
    AVERAGE = "average"  # expected value over tie orders: gains averaged per tie group (scikit-learn)
    OPTIMISTIC = "optimistic"  # score desc, then relevance desc: an upper bound
    PESSIMISTIC = "pessimistic"  # score desc, then relevance asc: a lower bound
    DOCNO_ASCENDING = "docno_ascending"  # score desc, then docno asc in byte order (pyndeval, as ir_measures runs ndeval)


class Scores(StrEnum):
    """The precision a run's scores are ranked at."""

    FLOAT32 = "float32"  # a C float, as trec_eval stores them (trec_format.h): scores equal there are tied
    FLOAT64 = "float64"  # as written (ranx, Microsoft Recommenders, scikit-learn, pandas)


class Queries(StrEnum):
    """Which queries are evaluated and averaged over (the denominator)."""

    QRELS = "qrels"  # every judged query; missing from the run scores 0 (trec_eval -c)
    INTERSECTION = "intersection"  # judged and retrieved only (trec_eval without -c, MS Recommenders)
    RUN = "run"  # every query of the run; unjudged ones score 0 (Spark)
    RELEVANT = "relevant"  # judged queries with a relevant judgment (Elliot, RecBole's test users); missing ones score 0


class Duplicates(StrEnum):
    """What a document listed twice for one query does (in a run or in qrels)."""

    ERROR = "error"  # stop with the file and line (trec_eval aborts: "duplicate docs")
    FIRST = "first"  # keep the first line, drop the later ones
    MAX = "max"  # keep the highest score (runs) or relevance (qrels)


class NegativeLabels(StrEnum):
    """What a negative relevance label in the qrels means."""

    UNJUDGED = "unjudged"  # in the pool but not judged: non-relevant, gain 0, skipped by bpref (trec_eval)
    NONRELEVANT = "nonrelevant"  # judged non-relevant, like label 0 (ranx)
    ERROR = "error"  # refuse the qrels (scikit-learn refuses negative y_true)


class IdealFrom(StrEnum):
    """Which documents the ideal ranking (IDCG) is built from."""

    JUDGMENTS = "judgments"  # every judged document of the query (trec_eval)
    RUN = "run"  # only the documents the run lists (scikit-learn ndcg_score)


class APDenominator(StrEnum):
    """What AP@k divides by."""

    R = "R"  # the number of relevant documents (trec_eval map_cut, ranx)
    MIN_R_K = "min_R_k"  # min(R, k) (MS Recommenders, RecBole, Spark)


class GradedBelowLevel(StrEnum):
    """What a judgment below the relevance level gains in a graded measure (nDCG with linear or exponential gains)."""

    KEEP = "keep"  # its label's gain: -l changes only binary measures (trec_eval, ir_measures)
    ZERO = "zero"  # nothing, as if not judged relevant at all: ranx drops the judgments below its level


class IPrecCut(StrEnum):
    """Which relevant document a recall level r stands at, for interpolated precision (R relevant documents)."""

    ROUND = "round"  # the lround(r R)-th (trec_eval 10.0: a breaking fix)
    TREC_EVAL9 = "trec_eval9"  # the (long)(r R + 0.9)-th (trec_eval 9, which pytrec_eval and ir_measures run)


class ShortLists(StrEnum):
    """What a cutoff k means for a list shorter than k."""

    PAD = "pad"  # padded with non-relevant documents: P@k divides by k, IDCG@k has k places (trec_eval m_P.c)
    TRUNCATE = "truncate"  # k becomes the list's length: P@k over the retrieved, IDCG@k over as many places (MLflow)


@dataclass(frozen=True)
class Conventions:
    """The conventions in force for one evaluation; defaults follow trec_eval.

    Each is a setting tools disagree on, named (docs/conventions.md gives every option and the tools that use it);
    a profile (``harness measures`` lists them) sets a tool's at once.

    Parameters
    ----------
    ties : Ties or str
        How documents with equal scores are ordered (trec_eval: by document id, descending).
    scores : Scores or str
        The scores' precision (trec_eval keeps a C float: 0.1234567891 and 0.1234567892 tie).
    queries : Queries or str
        Which queries a run is evaluated on (the judged ones; trec_eval's -c).
    duplicates, negative_labels, ideal_from, ap_denominator, short_lists, graded_below_level, iprec_cut : str
        The other named conventions (docs/conventions.md).
    relevance_level : int
        Relevant iff label >= it (trec_eval's -l).
    depth : int, optional
        Only the first ``depth`` retrieved count (trec_eval's -M).
    judged_only : bool
        Keep only retrieved documents that are judged (trec_eval's -J).
    collection_size : int
        Documents in the collection (trec_eval's -N).

    Examples
    --------
    >>> Conventions().ties
    <Ties.TREC_EVAL: 'trec_eval'>
    >>> Conventions.from_mapping({"ties": "average"}).ties
    <Ties.AVERAGE: 'average'>
    >>> Conventions(queries="relevant").queries  # an option's text is its named value
    <Queries.RELEVANT: 'relevant'>
    """

    ties: Ties = Ties.TREC_EVAL
    scores: Scores = Scores.FLOAT32  # trec_eval keeps a score as a C float: 0.1234567891 and 0.1234567892 tie
    queries: Queries = Queries.QRELS  # trec_eval default is intersection; -c is ours
    duplicates: Duplicates = Duplicates.ERROR
    negative_labels: NegativeLabels = NegativeLabels.UNJUDGED
    ideal_from: IdealFrom = IdealFrom.JUDGMENTS
    ap_denominator: APDenominator = APDenominator.R
    short_lists: ShortLists = ShortLists.PAD
    graded_below_level: GradedBelowLevel = GradedBelowLevel.KEEP  # trec_eval's -l never changes a graded gain
    iprec_cut: IPrecCut = IPrecCut.ROUND  # trec_eval 10.0 rounds r R; 9 truncated r R + 0.9
    relevance_level: int = 1  # trec_eval -l: relevant iff label >= 1
    depth: int | None = None  # trec_eval -M: only the first N retrieved count (None = all)
    judged_only: bool = False  # trec_eval -J: keep only retrieved documents judged (label >= 0), after depth
    collection_size: int = 0  # trec_eval -N: documents in the collection (utility's non-relevant not retrieved)

    def __post_init__(self) -> None:
        for name, kind in _enum_fields():  # Conventions(ties="input_order") from Python: the option's named value
            value = getattr(self, name)
            if not isinstance(value, kind):
                object.__setattr__(self, name, getattr(Conventions.from_mapping({name: value}), name))
        if self.depth is not None and self.depth < 1:
            raise ConventionError(
                f"depth must be a positive number of documents, got {self.depth}",
                hint="use depth: 100 to keep the first 100 documents of each query, or leave it out",
            )

    @classmethod
    def from_mapping(cls, values: dict[str, object]) -> Conventions:
        """Build from plain values (config or CLI), naming the bad key or value."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        kwargs: dict[str, object] = {}
        for key, raw in values.items():
            if key not in fields:
                raise ConventionError(f"unknown convention {key!r}", hint=f"use one of: {', '.join(fields)}")
            default = fields[key].default
            enum_type = type(default) if isinstance(default, Enum) else None
            if enum_type is not None:
                try:
                    kwargs[key] = enum_type(raw)
                except ValueError:
                    choices = ", ".join(str(m.value) for m in enum_type)
                    raise ConventionError(
                        f"{key} must be one of {choices}, got {raw!r}", hint=f"set {key} to one of {choices}"
                    ) from None
            elif key == "depth":
                kwargs[key] = None if raw is None else _positive_int(key, raw)
            elif key == "judged_only":
                if not isinstance(raw, bool):
                    raise ConventionError(f"judged_only must be true or false, got {raw!r}", hint="write judged_only: true")
                kwargs[key] = raw
            elif key == "collection_size":
                kwargs[key] = _int(key, raw)
                if kwargs[key] < 0:  # type: ignore[operator]
                    raise ConventionError(f"collection_size must be 0 or more, got {raw!r}", hint="write collection_size: 0")
            else:
                kwargs[key] = _int(key, raw)
        return cls(**kwargs)  # type: ignore[arg-type]

    def as_dict(self) -> dict[str, object]:
        """Plain values, in declaration order, for provenance and reports."""
        out: dict[str, object] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            out[f.name] = value.value if isinstance(value, Enum) else value
        return out


@cache
def _enum_fields() -> tuple[tuple[str, type[Enum]], ...]:
    """Each convention whose values are an enumeration, with it: what a Conventions checks its values against."""
    return tuple((f.name, type(f.default)) for f in dataclasses.fields(Conventions) if isinstance(f.default, Enum))


def _int(key: str, raw: object) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ConventionError(f"{key} must be a whole number, got {raw!r}", hint=f"write {key}: 1")
    return raw


def _positive_int(key: str, raw: object) -> int:
    value = _int(key, raw)
    if value < 1:
        raise ConventionError(f"{key} must be at least 1, got {value}", hint=f"write {key}: 100")
    return value
