"""The peers: what each evaluation tool's conventions are, in harness's names.

A peer is a set of conventions (its ``profile``, usable as ``profile:`` in a config), the
measure parameters that name its variant of a measure (RecBole's nDCG gains 1 per hit:
``nDCG(gain=binary)``), and what harness cannot reproduce of it, with the reason. Every
fact here was read in the peer's source or documentation (``source``); ``harness explain``
turns them into numbers on the user's own data.

>>> from harness.measures.parse import parse_measure
>>> PEERS["recbole"].measure_for(parse_measure("nDCG@10"))
Measure(name='nDCG', params=(('gain', 'binary'),), cutoff=10)
>>> PEERS["recbole"].conventions_for(parse_measure("AP@10")).ap_denominator
<APDenominator.MIN_R_K: 'min_R_k'>
>>> PEERS["elliot"].unreproducible(parse_measure("AP@10"))[:41]
"Elliot's MAP@k is the mean of P@1 ... P@k"
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from harness.measures.conventions import Conventions
from harness.measures.registry import PEER_NAMES, REGISTRY
from harness.measures.spec import Measure
from harness.measures.trec_names import TREC_MEASURES

# the measures whose value the ties convention "average" is defined for (registry: ties_average_ok)
_DCG = ("DCG", "nDCG", "IDCG")


@dataclass(frozen=True)
class Peer:
    """One tool's conventions, for every measure or per measure name."""

    name: str  # the profile's name
    tool: str  # as users know it
    conventions: Mapping[str, object] = field(default_factory=dict)
    params: Mapping[str, Mapping[str, object]] = field(default_factory=dict)  # measure name -> its variant's params
    measure_conventions: Mapping[str, Mapping[str, object]] = field(default_factory=dict)  # per measure name
    # per measure name, when the measure has a cutoff (ir_measures computes RR@k elsewhere than RR)
    cutoff_conventions: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    cannot: Mapping[str, str] = field(default_factory=dict)  # measure name ("*": any other) -> why not reproduced
    measures: tuple[str, ...] | None = None  # the measures the tool has (None: every one harness has)
    caveat: str = ""  # what can still differ on some queries, and why
    arbitrary_ties: bool = False  # its order of tied scores is no rule harness has: explain counts the queries it moves
    source: str = ""  # where the conventions were read

    def unreproducible(self, measure: Measure) -> str | None:
        """Why harness cannot give this peer's value of ``measure`` (None: it can)."""
        if measure.name in self.cannot:
            return self.cannot[measure.name]
        if self.measures is not None and measure.name not in self.measures:
            return self.cannot.get("*", f"{self.tool} has no {measure.name}")
        return None

    def conventions_for(self, measure: Measure, base: Conventions | None = None) -> Conventions:
        """``base`` (default: harness's) with this peer's conventions for ``measure``."""
        values = (base or Conventions()).as_dict()
        values.update(self.conventions)
        values.update(self.own_conventions(measure))
        return Conventions.from_mapping(values)

    def own_conventions(self, measure: Measure) -> dict[str, object]:
        """The conventions this peer uses for ``measure`` beyond its profile's (per measure, and with a cutoff)."""
        own = dict(self.measure_conventions.get(measure.name, {}))
        if measure.cutoff is not None:
            own.update(self.cutoff_conventions.get(measure.name, {}))
        return own

    def measure_for(self, measure: Measure) -> Measure:
        """``measure`` with this peer's variant's parameters (those the measure has)."""
        extra = self.params.get(measure.name, {})
        if not extra:
            return measure
        definition = REGISTRY.definition(measure)
        return definition.make({**dict(measure.params), **extra}, measure.cutoff)

    def differences(self, measure: Measure, base: Conventions | None = None) -> dict[str, object]:
        """Each convention or parameter this peer sets differently from ``base`` for ``measure``: name -> its value."""
        base = base or Conventions()
        mine, theirs = base.as_dict(), self.conventions_for(measure, base).as_dict()
        out: dict[str, object] = {k: v for k, v in theirs.items() if mine[k] != v}
        peer_measure = self.measure_for(measure)
        for key, value in peer_measure.params:
            if measure.param(key) != value:
                out[f"{measure.name}.{key}"] = value
        for key, _ in measure.params:  # a parameter the peer's variant resets to its default
            if peer_measure.param(key) is None:
                out[f"{measure.name}.{key}"] = REGISTRY.definition(measure).param_info(key).default
        return out


# the measures of the ranking tools: over judgments and a run alone (no items, subtopics or sampled rankings)
_RANKING = tuple(d.name for d in REGISTRY if not (d.beyond_accuracy or d.intent_aware or d.reads_samples))
_TREC_EVAL = TREC_MEASURES
_INTENT = tuple(d.name for d in REGISTRY if d.intent_aware)

_PEERS = (
    Peer(
        "trec_eval",
        "trec_eval -c",
        measures=_TREC_EVAL,
        cannot={"*": "trec_eval's measures are its -m names (harness measures lists each one's)"},
        source="trec_eval 10.0 (trec_format.h: float scores; form_res_rels.c, m_*.c)",
    ),
    Peer(
        "ir_measures",
        "ir_measures",
        {"iprec_cut": "trec_eval9"},
        measure_conventions={name: {"ties": "docno_ascending"} for name in _INTENT},
        cutoff_conventions={"RR": {"ties": "docno_ascending", "scores": "float64"}},
        measures=_RANKING + _INTENT,
        cannot={"*": "ir_measures' measures are the ranking and intent-aware ones"},
        caveat="each measure is computed by the first provider that has it: pytrec_eval (trec_eval 9, every judged "
        "query as -c) for most, MS MARCO's script for RR@k, pyndeval for the intent-aware ones",
        source="ir_measures/__init__.py (DefaultPipeline: runtime, pytrec_eval, ... msmarco); "
        "providers/msmarco_provider.py (RR@k: sorted by (-score, doc id) as Python floats); "
        "docs/advanced.rst (always -c)",
    ),
    Peer(
        "pytrec_eval",
        "pytrec_eval (trec_eval 9 inside)",
        {"queries": "intersection", "iprec_cut": "trec_eval9"},
        measures=_TREC_EVAL,
        cannot={"*": "pytrec_eval's measures are trec_eval's"},
        caveat="trec_eval 10.0 without -c is this profile with iprec_cut: round, and exits with status 4 when a judged "
        "query is missing from the run",
        source="pytrec_eval evaluates the queries both dicts have; its trec_eval 9 m_iprec_at_recall.c cuts at "
        "(long)(r * R + 0.9), where 10.0 rounds",
    ),
    Peer(
        "ranx",
        "ranx",
        {"negative_labels": "nonrelevant", "scores": "float64", "graded_below_level": "zero"},
        caveat="ranx orders tied scores by an unstable sort, then reverses it: no tie rule gives its order, so a query "
        "whose tied documents straddle a cutoff can differ",
        arbitrary_ties=True,
        measures=_RANKING,
        cannot={"*": "ranx's metrics are ranking measures"},
        source="ranx metrics/*.py, data_structures/qrels.py",
    ),
    Peer(
        "msrec",
        "Microsoft Recommenders",
        {"queries": "intersection", "ap_denominator": "min_R_k", "ties": "input_order", "scores": "float64"},
        params={"nDCG": {"gain": "binary"}, "Novelty": {"weight": "recommendation", "cold": "zero"}},
        measure_conventions={
            "nDCG": {"queries": "qrels"},  # its outer merge keeps the users without predictions
            # its beyond-accuracy metrics read the predictions and the training frame only
            **{name: {"queries": "run"} for name in ("Coverage", "Entropy", "Novelty", "ILD", "Serendipity")},
        },
        cannot={
            "*": "Microsoft Recommenders' metrics are precision, recall, nDCG and MAP at k, catalog_coverage, "
            "distributional_coverage, novelty, diversity and serendipity"
        },
        measures=("P", "R", "AP", "nDCG", "Coverage", "Entropy", "Novelty", "ILD", "Serendipity"),
        caveat="every row of the truth frame counts as relevant, rating 0 too: set relevance_level 0 to match a truth "
        "frame with zero ratings",
        source="recommenders/evaluation/python_evaluation.py (merge_ranking_true_pred: the users of both frames; "
        "ndcg_at_k: score_type='binary', an outer merge with the truth, so every truth user)",
    ),
    Peer(
        "recbole",
        "RecBole",
        {"ties": "input_order", "ap_denominator": "min_R_k", "queries": "relevant"},
        params={
            "nDCG": {"gain": "binary"},
            "Coverage": {"catalog": "recbole"},
            "Gini": {"catalog": "recbole"},
            "Entropy": {"form": "recbole"},
            "TailShare": {"ties": "recbole"},
        },
        cannot={
            "*": "RecBole's top-k metrics are Hit, MRR, MAP, Recall, NDCG, Precision, ItemCoverage, "
            "AveragePopularity, GiniIndex, ShannonEntropy and TailPercentage"
        },
        measures=("Success", "RR", "AP", "R", "nDCG", "P", "Coverage", "ARP", "Gini", "Entropy", "TailShare"),
        caveat="RecBole counts every test interaction as positive; harness counts labels at or above the relevance level",
        source="recbole/evaluator/metrics.py (NDCG: binary hits, ideal of min(R, k); MAP: over min(R, k))",
    ),
    Peer(
        "elliot",
        "Elliot",
        {"ties": "input_order", "queries": "relevant", "scores": "float64"},
        params={
            "nDCG": {"gain": "elliot"},
            "Gini": {"form": "elliot"},
            "Entropy": {"form": "elliot"},
            "ARP": {"pop": "users"},
            "ItemMAD": {"empty_groups": "nan"},
            "UserMAD": {"empty_groups": "nan"},
        },
        # its test users are those with a relevant item for the accuracy metrics; the others read every list
        measure_conventions={
            name: {"queries": "qrels"}
            for name in (
                "RecItems",
                "Gini",
                "Entropy",
                "ARP",
                "APLT",
                "ACLT",
                "EFD",
                "EPC",
                "REO",
                "RSP",
                "PopREO",
                "PopRSP",
                "ItemMAD",
                "UserMAD",
                "BiasDisparity",
            )
        },
        cannot={
            "AP": "Elliot's MAP@k is the mean of P@1 ... P@k over every rank, relevant or not: a different measure from AP",
            "Coverage": "Elliot's ItemCoverage counts the distinct recommended items: harness's RecItems",
            "*": "Elliot's metrics in harness's terms are nDCG, P, R, RR, Success, RecItems, Gini, Entropy, ARP, "
            "APLT, ACLT, EFD, EPC, REO, RSP, PopREO, PopRSP, ItemMAD, UserMAD and BiasDisparity",
        },
        measures=(
            "nDCG",
            "P",
            "R",
            "RR",
            "Success",
            "AP",
            "Coverage",
            "RecItems",
            "Gini",
            "Entropy",
            "ARP",
            "APLT",
            "ACLT",
            "EFD",
            "EPC",
            "REO",
            "RSP",
            "PopREO",
            "PopRSP",
            "ItemMAD",
            "UserMAD",
            "BiasDisparity",
        ),
        caveat="Elliot's gain starts at its relevance_threshold: set relevance_level to it",
        source="elliot/evaluation/metrics/accuracy/{ndcg,map,precision,recall,mrr}; relevance/relevance.py",
    ),
    Peer(
        "mlflow",
        "MLflow",
        {"ties": "input_order", "short_lists": "truncate", "scores": "float64"},
        params={"nDCG": {"gain": "binary"}},
        cannot={"*": "MLflow's retrieval metrics are precision_at_k, recall_at_k and ndcg_at_k"},
        measures=("P", "R", "nDCG"),
        caveat="MLflow averages over the rows of its evaluation table: a row with no ground truth scores 0, or 1 when "
        "nothing was retrieved either; a document retrieved twice counts twice",
        source="mlflow/metrics/metric_definitions.py (_precision_at_k_eval_fn, _recall_at_k_eval_fn, "
        "_ndcg_at_k_eval_fn: scikit-learn's ndcg_score with k = the number retrieved)",
    ),
    Peer(
        "spark",
        "Spark MLlib (RankingMetrics)",
        {"queries": "run", "ap_denominator": "min_R_k", "ties": "input_order", "scores": "float64"},
        params={"nDCG": {"gain": "binary"}},
        cannot={"*": "Spark's RankingMetrics are precisionAt, recallAt, ndcgAt, meanAveragePrecision(At)"},
        measures=("P", "R", "nDCG", "AP"),
        caveat="Spark scores each row of predictions (a row without ground truth at 0) in the order given; its graded "
        "ndcgAt builds the ideal from the relevance values in the order given, so pre-sort them",
        source="mllib/evaluation/RankingMetrics.scala (read, not run here: no JVM); ../shared/docs/semantics.md",
    ),
    Peer(
        "sklearn",
        "scikit-learn",
        {"ties": "average", "ideal_from": "run", "scores": "float64"},
        measures=_DCG,
        cannot={"*": "scikit-learn's ranking scores are ndcg_score and dcg_score"},
        source="sklearn/metrics/_ranking.py (ndcg_score, _tie_averaged_dcg)",
    ),
    Peer(
        "torchmetrics",
        "TorchMetrics",
        {"queries": "run", "ideal_from": "run"},
        measure_conventions={name: {"ties": "average"} for name in _DCG},
        cannot={
            "AP": "TorchMetrics' RetrievalMAP(top_k) divides by the relevant documents found in the top k, a "
            "denominator no tool shares",
            "R": "TorchMetrics' RetrievalRecall counts only the relevant documents among the predictions",
            "*": "TorchMetrics' retrieval metrics in harness's terms are nDCG, P, RR, Success, AP and R",
        },
        measures=("nDCG", "P", "RR", "Success", "AP", "R"),
        caveat="TorchMetrics orders tied scores of P, RR and Success by torch's unstable argsort, and since 1.7.4 "
        "treats a document scored <= 0 as not retrieved (nDCG too in later releases): give it positive scores",
        arbitrary_ties=True,
        source="torchmetrics/functional/retrieval/*.py",
    ),
    Peer(
        "lenskit",
        "LensKit",
        {"ties": "input_order", "scores": "float64"},
        measures=("ExposureGini",),
        cannot={"*": "LensKit's metrics in harness's terms here are ExposureGini and ListGini"},
        source="lenskit/metrics (ExposureGini, ListGini over the catalogue)",
    ),
    Peer(
        "pyxclib",
        "pyxclib",
        {"ties": "input_order", "scores": "float32"},
        params={"PSP": {"norm": "pyxclib"}, "PSnDCG": {"norm": "pyxclib"}, "nDCG": {"gain": "binary"}},
        measures=("PSP", "PSnDCG", "P", "nDCG"),
        cannot={"*": "pyxclib's metrics are P, nDCG, PSP and PSnDCG at k"},
        caveat="pyxclib's precision divides by k and its nDCG gains 1 per relevant label: set relevance_level to "
        "the rating that counts as a label",
        source="xclib/evaluation/xc_metrics.py (psprecision, psndcg: over the propensity-ideal list)",
    ),
    Peer(
        "expeval",
        "expeval (TREC Fair Ranking)",
        measures=("EE_L", "EE_D", "EE_R"),
        params={name: {"norm": "expeval", "compat": "expeval"} for name in ("EE_L", "EE_D", "EE_R")},
        cannot={"*": "expeval's measures are expected exposure's EE-L, EE-D and EE-R"},
        caveat="expeval prints per-query values only: the mean is harness's",
        source="github.com/diazf/expeval (expeval.py: normalised unless -U; metrics.py's bounds and defaults)",
    ),
    Peer(
        "ndeval",
        "ndeval (pyndeval, as ir_measures runs it)",
        {"ties": "docno_ascending"},
        measures=_INTENT,
        params={"alpha_DCG": {"rank1": "ndeval"}, "ERR_IA": {"rank1": "ndeval"}},  # its rank-1 discount, kept
        cannot={"*": "ndeval's measures are the intent-aware ones (subtopic judgments)"},
        source="pyndeval (score descending, doc id ascending); ndeval.c",
    ),
)
PEERS: dict[str, Peer] = {peer.name: peer for peer in _PEERS}
PROFILES: dict[str, Mapping[str, object]] = {peer.name: peer.conventions for peer in _PEERS}


# Which tools use each value of each convention (profile names, and tools without a profile), from
# ../shared/docs/semantics.md and the sources named in PEERS: what the report and `harness measures` print beside an
# option. A profile that sets an option is listed under its value (tests/evaluation/test_explain.py checks it).
USED_BY: dict[tuple[str, str], tuple[str, ...]] = {
    ("ties", "trec_eval"): ("trec_eval", "pytrec_eval", "ir_measures"),
    ("ties", "input_order"): ("msrec", "recbole", "elliot", "mlflow", "spark", "lenskit", "pyxclib"),
    ("ties", "average"): ("sklearn", "torchmetrics' nDCG"),
    ("ties", "docno_ascending"): ("ndeval", "pyndeval, as ir_measures runs ndeval", "ir_measures' RR@k"),
    ("scores", "float32"): ("trec_eval", "pytrec_eval", "ir_measures", "recbole", "torchmetrics", "pyxclib"),
    ("scores", "float64"): ("ranx", "msrec", "elliot", "mlflow", "spark", "sklearn", "lenskit", "ir_measures' RR@k"),
    ("graded_below_level", "keep"): ("trec_eval", "pytrec_eval", "ir_measures"),
    ("graded_below_level", "zero"): ("ranx",),
    ("iprec_cut", "round"): ("trec_eval",),
    ("iprec_cut", "trec_eval9"): ("pytrec_eval", "ir_measures", "trec_eval 9"),
    ("queries", "qrels"): ("trec_eval -c", "ir_measures", "ranx"),
    ("queries", "intersection"): ("trec_eval without -c", "pytrec_eval", "msrec"),
    ("queries", "run"): ("torchmetrics", "spark"),
    ("queries", "relevant"): ("recbole", "elliot"),
    ("duplicates", "error"): ("trec_eval",),
    ("negative_labels", "unjudged"): ("trec_eval", "pytrec_eval", "ir_measures"),
    ("negative_labels", "nonrelevant"): ("ranx",),
    ("negative_labels", "error"): ("sklearn",),
    ("ideal_from", "judgments"): ("trec_eval", "pytrec_eval", "ir_measures", "ranx", "msrec", "recbole", "elliot", "mlflow"),
    ("ideal_from", "run"): ("sklearn", "torchmetrics"),
    ("ap_denominator", "R"): ("trec_eval", "ranx", "ir_measures"),
    ("ap_denominator", "min_R_k"): ("msrec", "recbole", "spark"),
    ("short_lists", "pad"): ("trec_eval", "ir_measures", "ranx", "msrec", "recbole", "elliot", "torchmetrics"),
    ("short_lists", "truncate"): ("mlflow", "RecList"),
}


def measure_conventions(
    profile: str | None, measure: Measure, conventions: Conventions, given: Iterable[str] = ()
) -> Conventions:
    """The conventions ``measure`` is evaluated under in a run under ``profile``: the run's ``conventions`` (the
    profile's, then the settings the user gave) with the tool's own for this measure, but for the settings named in
    ``given``, which stay the user's.

    >>> from harness.measures.parse import parse_measure
    >>> run = Conventions.from_mapping(PROFILES["elliot"])
    >>> measure_conventions("elliot", parse_measure("RSP(group=provider)@10"), run).queries.value
    'qrels'
    >>> measure_conventions("elliot", parse_measure("P@10"), run).queries.value
    'relevant'
    >>> measure_conventions("elliot", parse_measure("RSP(group=provider)@10"), run, given=["queries"]).queries.value
    'relevant'
    """
    peer = PEERS.get(profile or "")
    own = {} if peer is None else peer.own_conventions(measure)
    kept = {key: value for key, value in own.items() if key not in given}
    return Conventions.from_mapping({**conventions.as_dict(), **kept}) if kept else conventions


def by_conventions(
    profile: str | None, measures: Iterable[Measure], conventions: Conventions, given: Iterable[str] = ()
) -> dict[Conventions, list[Measure]]:
    """``measures`` grouped by the conventions each is evaluated under in a run under ``profile``
    (:func:`measure_conventions`), groups and measures in the order of ``measures``: one evaluation a group.

    >>> from harness.measures.parse import parse_measures
    >>> run = Conventions.from_mapping(PROFILES["elliot"])
    >>> groups = by_conventions("elliot", parse_measures(["P@10", "RSP(group=provider)@10", "nDCG@10"]), run)
    >>> [(c.queries.value, [str(m) for m in ms]) for c, ms in groups.items()]
    [('relevant', ['P@10', 'nDCG@10']), ('qrels', ["RSP(group='provider')@10"])]
    """
    given = frozenset(given)
    groups: dict[Conventions, list[Measure]] = {}
    for measure in measures:
        groups.setdefault(measure_conventions(profile, measure, conventions, given), []).append(measure)
    return groups


def conventions_apart(
    profile: str | None, measures: Iterable[Measure], conventions: Conventions, given: Iterable[str] = ()
) -> dict[Measure, dict[str, object]]:
    """Each of ``measures`` evaluated under other conventions than the run's ``conventions`` (the profile's tool's
    own): the settings that differ, as recorded beside the run's.

    >>> from harness.measures.parse import parse_measures
    >>> run = Conventions.from_mapping(PROFILES["elliot"])
    >>> conventions_apart("elliot", parse_measures(["P@10", "RSP(group=provider)@10"]), run)
    {Measure(name='RSP', params=(('group', 'provider'),), cutoff=10): {'queries': 'qrels'}}
    """
    measures, base = tuple(measures), conventions.as_dict()
    out: dict[Measure, dict[str, object]] = {}
    for group, members in by_conventions(profile, measures, conventions, given).items():
        differ = {key: value for key, value in group.as_dict().items() if base[key] != value}
        for measure in members if differ else ():
            out[measure] = dict(differ)  # one mapping each: YAML would write a shared one as an anchor and aliases
    return {m: out[m] for m in measures if m in out}


def option_users() -> list[tuple[str, str, tuple[str, ...]]]:
    """(option, value, the tools using it) for every value of every named convention, in declaration order.

    >>> [row for row in option_users() if row[0] == "ap_denominator"]
    [('ap_denominator', 'R', ('trec_eval', 'ranx', 'ir_measures')), ('ap_denominator', 'min_R_k', ('msrec', 'recbole', 'spark'))]
    """
    rows = []
    for option in Conventions().as_dict():
        kind = type(getattr(Conventions(), option))
        if issubclass(kind, Enum):
            rows += [(option, str(m.value), USED_BY.get((option, str(m.value)), ())) for m in kind]
    return rows


__all__ = [
    "PEERS",
    "PEER_NAMES",
    "PROFILES",
    "USED_BY",
    "Peer",
    "by_conventions",
    "conventions_apart",
    "measure_conventions",
    "option_users",
]
