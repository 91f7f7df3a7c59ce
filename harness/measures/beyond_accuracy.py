"""The beyond-accuracy measures: coverage, diversity, novelty and popularity bias, as the recommender tools define them.

They read the training interactions (``needs``: ``train``), the item catalogue (``items``) or its features; a
system measure (Coverage, Gini, Entropy ...) has one value per run, from the distinct items recommended.

>>> from harness.measures.spec import Measure
>>> GINI.higher(Measure("Gini", cutoff=10)), GINI.higher(Measure("Gini", (("form", "elliot"),), 10))
(False, True)
>>> sorted(COVERAGE.inputs(Measure("Coverage", (("catalog", "items"),), 10)))
['items']
"""

from __future__ import annotations

import numpy as np

from harness.errors import MeasureError
from harness.kernels import beyond
from harness.kernels._segments import ItemData, RankedLists
from harness.measures.definition import (
    MeasureDef,
    ParamInfo,
    PeerName,
    SystemValue,
    When,
    not_per_query,
    number_of,
    rel_of,
    text_of,
)
from harness.measures.spec import Measure

_FAMILY = "beyond accuracy"
_INF = float("inf")
CATALOG = ParamInfo(
    "catalog",
    "text",
    "train",
    "item universe: 'train' (distinct training items, msrec/Elliot), 'items' (the catalogue file), "
    "'recbole' (every item of train, qrels and catalogue + 1 for [PAD]: RecBole's num_items)",
    ("train", "items", "recbole"),
)
_SIM = ParamInfo(
    "sim",
    "text",
    "cooccurrence",
    "item similarity: 'cooccurrence' (cosine of the items' training users, msrec's default) or 'features' "
    "(cosine of the catalogue's numeric columns)",
    ("cooccurrence", "features"),
)
_COLD = ParamInfo(
    "cold",
    "text",
    "max",
    "an item absent from training: 'max' novelty -log2(1/T), 'zero' (msrec: 0, still counted), 'skip' it",
    ("max", "zero", "skip"),
)
_POP = ParamInfo("pop", "text", "rows", "popularity: training 'rows' (RecBole) or distinct 'users' (Elliot)", ("rows", "users"))
_SER_REL = ParamInfo("rel", "number", None, "relevant iff test label >= rel; default: every recommended item counts as relevant")
ELLIOT_REL = ParamInfo("rel", "number", None, "relevant iff test label >= rel (default: the relevance_level convention)")
HEAD = ParamInfo("head", "number", 0.8, "the short head holds this share of the training interactions")


# What the measures read -----------------------------------------------------------------------------------------------
def universe_needs(m: Measure, default: str = "train") -> frozenset[str]:
    """The input that holds the measure's item universe (its ``catalog``): training, the catalogue, or none."""
    return {"train": frozenset({"train"}), "items": frozenset({"items"}), "recbole": frozenset()}[text_of(m, "catalog", default)]


def _similarity_needs(m: Measure) -> frozenset[str]:
    return frozenset({"train", "items", "features"}) if text_of(m, "sim", "cooccurrence") == "features" else frozenset({"train"})


def needs_train(m: Measure) -> frozenset[str]:
    return frozenset({"train"})


def outside_universe(lists: RankedLists, m: Measure, shown: np.ndarray, default: str = "train") -> np.ndarray:
    """Per row of weights, the items shown there (``shown``: (B, items) counts or exposures) outside the measure's
    universe: they join it (Gini counts them). Each row counts its own, so a value depends only on the lists it
    weighs: a system's Gini is the same alone, in a bootstrap resample's terms and beside any other system."""
    items = lists.items
    if items is None:
        raise TypeError("a beyond-accuracy measure needs the lists' items")  # the evaluator attaches them: a caller's bug
    member = {"train": items.in_train, "items": items.in_catalog}.get(text_of(m, "catalog", default))
    if member is None:
        return np.zeros(shown.shape[0], dtype=np.int64)
    counts: np.ndarray = ((shown > 0) & ~member).sum(axis=1)
    return counts


def long_tail(lists: RankedLists, m: Measure) -> np.ndarray:
    """Elliot's long tail: the training items outside the most popular ones holding ``head`` of the interactions."""
    return beyond.elliot_long_tail(items_of(lists), number_of(m, "head", 0.8))


def items_of(lists: RankedLists) -> ItemData:
    """The item statistics the evaluator attached to the lists."""
    if lists.items is None:
        raise TypeError("a beyond-accuracy measure needs the lists' items")  # the evaluator attaches them: a caller's bug
    return lists.items


# Catalogue measures: one value per run ---------------------------------------------------------------------------------
def coverage(lists: RankedLists, m: Measure, weights: np.ndarray) -> np.ndarray:
    """Distinct recommended items over the universe's. Over the training items (msrec) a recommended item outside
    them counts, so coverage can pass 1; over the catalogue only its items count (RecBole recommends nothing else):
    at most 1, and the diagnostics count the recommendations outside it."""
    items = items_of(lists)
    catalog = text_of(m, "catalog", "train")
    counts = beyond.coverage_counts(lists, m.cutoff, weights)
    if catalog == "items":
        counts = np.where(items.in_catalog[None, :], counts, 0.0)
    return beyond.coverage(counts, beyond.universe_size(items, catalog))


def _coverage_bounds(m: Measure) -> tuple[float, float]:
    """Over the catalogue only its items count (at most 1); over the training items others count too (no bound)."""
    return (0.0, 1.0) if text_of(m, "catalog", "train") == "items" else (0.0, _INF)


def recommended_items(lists: RankedLists, m: Measure, weights: np.ndarray) -> np.ndarray:
    counts: np.ndarray = (beyond.coverage_counts(lists, m.cutoff, weights) > 0).sum(axis=1).astype(np.float64)
    return counts


def entropy(lists: RankedLists, m: Measure, weights: np.ndarray) -> np.ndarray:
    counts = beyond.coverage_counts(lists, m.cutoff, weights)
    form = text_of(m, "form", "msrec")
    if form != "elliot":
        return beyond.entropy(counts, form)
    length = np.minimum(lists.n_ret, m.cutoff) if m.cutoff else lists.n_ret
    share = beyond.coverage_counts(lists, m.cutoff, weights * np.where(length > 0, 1.0 / np.maximum(length, 1), 0.0))
    return beyond.entropy(counts, form, share, (weights * (length > 0)).sum(axis=1))


def gini(lists: RankedLists, m: Measure, weights: np.ndarray) -> np.ndarray:
    counts = beyond.coverage_counts(lists, m.cutoff, weights)
    size = beyond.universe_size(items_of(lists), text_of(m, "catalog", "train")) + outside_universe(lists, m, counts)
    return beyond.gini(counts, size, text_of(m, "form", "recbole"))


COVERAGE = MeasureDef(
    "Coverage",
    not_per_query,
    "catalogue coverage: distinct recommended items / items of the universe: the training items by default (msrec "
    "catalog_coverage; recommended items outside them count, as in msrec, so it can pass 1), catalog=items the "
    "catalogue's (its items only: at most 1; RecBole ItemCoverage), catalog=recbole RecBole's num_items. A system measure.",
    _FAMILY,
    cutoff="optional",
    params=(CATALOG,),
    system=SystemValue(kernel=coverage, bounds=_coverage_bounds),
    needs=universe_needs,
    peer_names=(
        PeerName("recbole", "ItemCoverage", "Coverage(catalog=recbole)", read=True),
        PeerName("msrec", "catalog_coverage", "Coverage", read=True),
    ),
    citation="Ge et al., RecSys 2010",
)
RECITEMS = MeasureDef(
    "RecItems",
    not_per_query,
    "number of distinct recommended items (Elliot ItemCoverage). A system measure.",
    _FAMILY,
    cutoff="optional",
    system=SystemValue(kernel=recommended_items, bounds=(0.0, _INF)),
    integer=True,
    peer_names=(PeerName("elliot", "ItemCoverage", "RecItems"),),
)
ENTROPY = MeasureDef(
    "Entropy",
    not_per_query,
    "Shannon entropy of the recommendation shares p_i = r_i / N. form=msrec: -sum p log2 p in bits (msrec "
    "distributional_coverage); form=recbole: the mean of -p ln p over the distinct recommended items (RecBole "
    "ShannonEntropy's code); form=elliot: each list weighs 1 (Elliot SEntropy). A system measure.",
    _FAMILY,
    cutoff="optional",
    system=SystemValue(kernel=entropy, bounds=(0.0, _INF)),
    params=(
        ParamInfo(
            "form",
            "text",
            "msrec",
            "msrec (bits, summed), recbole (ln, mean), elliot (log2, lists weigh 1)",
            ("msrec", "recbole", "elliot"),
        ),
    ),
    peer_names=(
        PeerName("msrec", "distributional_coverage", "Entropy", read=True),
        PeerName("recbole", "ShannonEntropy", "Entropy(form=recbole)", read=True),
        PeerName("elliot", "SEntropy", "Entropy(form=elliot)"),
    ),
    citation="Shani & Gunawardana, Evaluating Recommendation Systems, 2011",
)
GINI = MeasureDef(
    "Gini",
    not_per_query,
    "Gini index of the recommendation counts over the item universe (items never recommended count 0). "
    "form=recbole: 0 when equal, lower is better (RecBole GiniIndex); form=elliot: 1 - Gini x n/(n-1), "
    "1 when equal, higher is better (Elliot Gini). A system measure.",
    _FAMILY,
    cutoff="optional",
    system=SystemValue(kernel=gini, bounds=(0.0, 1.0)),
    needs=universe_needs,
    higher_is_better=False,
    higher_when=When("form", "elliot"),
    params=(
        CATALOG,
        ParamInfo("form", "text", "recbole", "recbole (inequality, n) or elliot (1 - Gini, n - 1)", ("recbole", "elliot")),
    ),
    peer_names=(
        PeerName("recbole", "GiniIndex", "Gini(catalog=recbole)", read=True),
        PeerName("elliot", "Gini", "Gini(form=elliot)"),
    ),
)


# Per-user measures ----------------------------------------------------------------------------------------------------
def novelty(lists: RankedLists, m: Measure) -> np.ndarray:
    return beyond.novelty(lists, m.cutoff, text_of(m, "cold", "max"))


def system_novelty(lists: RankedLists, m: Measure, weights: np.ndarray) -> np.ndarray:
    info, counted = beyond.self_information(items_of(lists), text_of(m, "cold", "max"))
    per_user, kept = (beyond.top_sums(lists, m.cutoff, np.where(counted, v, 0.0)) for v in (info, np.ones(info.size)))
    return np.asarray((weights @ per_user) / (weights @ kept))


def ild(lists: RankedLists, m: Measure) -> np.ndarray:
    return beyond.ild(lists, m.cutoff, text_of(m, "sim", "cooccurrence"))


def serendipity(lists: RankedLists, m: Measure) -> np.ndarray:
    return beyond.serendipity(lists, m.cutoff, text_of(m, "sim", "cooccurrence"), rel_of(m))


def arp(lists: RankedLists, m: Measure) -> np.ndarray:
    return beyond.arp(lists, m.cutoff, text_of(m, "pop", "rows"))


def _one_tail_rule(m: Measure) -> None:
    if m.param("tail") is not None and m.param("tail_count") is not None:
        raise MeasureError(f"{m} sets both tail and tail_count", hint="give one: a share of the items, or a count threshold")
    if not 0 < number_of(m, "tail", 0.1) <= 1:
        raise MeasureError(f"tail of {m} must lie in (0, 1], got {m.param('tail')}", hint="or use tail_count for a threshold")


def tail_share(lists: RankedLists, m: Measure) -> np.ndarray:
    items = items_of(lists)
    if m.param("tail_count") is not None:
        tail = beyond.recbole_tail(items, None, number_of(m, "tail_count", 0))
    else:
        tail = beyond.recbole_tail(items, number_of(m, "tail", 0.1), None, text_of(m, "ties", "id"))
    return beyond.tail_share(lists, m.cutoff, tail)


def aplt(lists: RankedLists, m: Measure) -> np.ndarray:
    return beyond.tail_share(lists, m.cutoff, long_tail(lists, m))


def aclt(lists: RankedLists, m: Measure) -> np.ndarray:
    return beyond.tail_count(lists, m.cutoff, long_tail(lists, m))


def efd(lists: RankedLists, m: Measure) -> np.ndarray:
    return beyond.efd(lists, m.cutoff, rel_of(m))


def epc(lists: RankedLists, m: Measure) -> np.ndarray:
    return beyond.epc(lists, m.cutoff, rel_of(m))


NOVELTY = MeasureDef(
    "Novelty",
    novelty,
    "mean self-information -log2(c_i / T) of the recommended items, c_i the item's training rows (msrec novelty on "
    "one user's list). weight=recommendation: the run's value with every recommendation weighing the same (msrec "
    "novelty): a system measure.",
    _FAMILY,
    cutoff="optional",
    needs=needs_train,
    undefined_skipped=True,
    system=SystemValue(kernel=system_novelty, when=When("weight", "recommendation")),
    params=(
        _COLD,
        ParamInfo(
            "weight",
            "text",
            "user",
            "user: per user (mean of lists); recommendation: msrec's system value",
            ("user", "recommendation"),
        ),
    ),
    peer_names=(PeerName("msrec", "novelty", "Novelty(weight=recommendation,cold=zero)"),),
    citation="Castells, Vargas & Wang, ECIR 2011",
)
ILD = MeasureDef(
    "ILD",
    ild,
    "intra-list diversity: 1 - mean similarity over the unordered pairs of the list (msrec user_diversity; unseen "
    "pairs count 0). Undefined below 2 items (left out, as msrec does).",
    _FAMILY,
    cutoff="optional",
    params=(_SIM,),
    needs=_similarity_needs,
    undefined_skipped=True,
    item_similarity=True,
    peer_names=(PeerName("msrec", "diversity", "ILD", read=True), PeerName("msrec", "user_diversity", "ILD")),
    citation="Ziegler et al., WWW 2005",
)
SERENDIPITY = MeasureDef(
    "Serendipity",
    serendipity,
    "mean over the list of (1 - mean similarity to the user's training items) x relevance (msrec user_serendipity; "
    "rel unset: every item counts as relevant). Undefined without training history.",
    _FAMILY,
    cutoff="optional",
    params=(_SIM, _SER_REL),
    needs=_similarity_needs,
    undefined_skipped=True,
    item_similarity=True,
    peer_names=(PeerName("msrec", "serendipity", "Serendipity"), PeerName("msrec", "user_serendipity", "Serendipity")),
    citation="Zhang et al., Auralist, WSDM 2012",
)
ARP = MeasureDef(
    "ARP",
    arp,
    "average recommendation popularity of the list: training rows (RecBole AveragePopularity) or distinct users with "
    "pop=users (Elliot ARP); items absent from training count 0. Lower is less popularity bias.",
    _FAMILY,
    cutoff="optional",
    params=(_POP,),
    needs=needs_train,
    undefined_skipped=True,
    higher_is_better=False,
    peer_names=(PeerName("recbole", "AveragePopularity", "ARP", read=True), PeerName("elliot", "ARP", "ARP(pop=users)")),
    citation="Abdollahpouri et al., FLAIRS 2019",
)
TAILSHARE = MeasureDef(
    "TailShare",
    tail_share,
    "share of the list in RecBole's tail: the max(int(n x tail), 1) training items with the fewest training rows "
    "(ties by item id), or with tail_count=t the items with at most t rows (RecBole TailPercentage).",
    _FAMILY,
    cutoff="optional",
    needs=needs_train,
    undefined_skipped=True,
    validate=_one_tail_rule,
    value_range=(0.0, 1.0),
    params=(
        ParamInfo("tail", "number", None, "share of the training items in the tail (default 0.1)"),
        ParamInfo("tail_count", "number", None, "instead: items with at most this many training rows"),
        ParamInfo(
            "ties",
            "text",
            "id",
            "equal training counts at the share's cut: by item id, or by first appearance in the training file "
            "(recbole, RecBole's internal ids)",
            ("id", "recbole"),
        ),
    ),
    peer_names=(PeerName("recbole", "TailPercentage", "TailShare(tail=0.1,ties=recbole)", read=True),),
)
APLT = MeasureDef(
    "APLT",
    aplt,
    "average percentage of long-tail items (Elliot APLT): the share of the list outside the short head, the most "
    "popular items holding 80% of the training interactions.",
    _FAMILY,
    cutoff="optional",
    params=(HEAD,),
    needs=needs_train,
    undefined_skipped=True,
    value_range=(0.0, 1.0),
    peer_names=(PeerName("elliot", "APLT", "APLT"),),
    citation="Abdollahpouri et al., RecSys 2017",
)
ACLT = MeasureDef(
    "ACLT",
    aclt,
    "average coverage of long-tail items (Elliot ACLT): the number of long-tail items in the list.",
    _FAMILY,
    cutoff="optional",
    params=(HEAD,),
    needs=needs_train,
    undefined_skipped=True,
    peer_names=(PeerName("elliot", "ACLT", "ACLT"),),
    citation="Abdollahpouri et al., FLAIRS 2019",
)
EFD = MeasureDef(
    "EFD",
    efd,
    "expected free discovery (Elliot EFD): rank-discounted (1/log2(r+1)), relevance-weighted -log2(pop_i / sum pop), "
    "over the sum of the list's discounts. Undefined without a relevant test item.",
    _FAMILY,
    cutoff="optional",
    params=(ELLIOT_REL,),
    needs=needs_train,
    undefined_skipped=True,
    peer_names=(PeerName("elliot", "EFD", "EFD"),),
    citation="Vargas & Castells, RecSys 2011",
)
EPC = MeasureDef(
    "EPC",
    epc,
    "expected popularity complement (Elliot EPC): as EFD with 1 - pop_i / training users.",
    _FAMILY,
    cutoff="optional",
    params=(ELLIOT_REL,),
    needs=needs_train,
    undefined_skipped=True,
    peer_names=(PeerName("elliot", "EPC", "EPC"),),
    citation="Vargas & Castells, RecSys 2011",
)

MEASURES = (COVERAGE, RECITEMS, ENTROPY, GINI, NOVELTY, ILD, SERENDIPITY, ARP, TAILSHARE, APLT, ACLT, EFD, EPC)
