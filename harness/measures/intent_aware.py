"""The intent-aware diversity measures: ndeval's, spelt as ir_measures spells them. They read subtopic judgments.

>>> from harness.measures.spec import Measure
>>> ALPHA_NDCG.intent_aware, str(ALPHA_NDCG.make({"alpha": 0.8}, 20))
(True, 'alpha_nDCG(alpha=0.8)@20')
"""

from __future__ import annotations

import numpy as np

from harness.kernels import intent
from harness.kernels._segments import RankedLists
from harness.measures.definition import MeasureDef, ParamInfo, PeerName, cutoff_of, number_of, text_of
from harness.measures.spec import Measure

_FAMILY = "intent-aware"
_ALPHA = ParamInfo(
    "alpha", "number", 0.5, "redundancy penalty: each earlier document of a subtopic multiplies its gain by 1 - alpha"
)
_BETA = ParamInfo("beta", "number", 0.5, "patience of NRBP's user: the weight of rank r is beta^(r - 1)")
_RANK1 = ParamInfo(
    "rank1",
    "text",
    "fixed",
    "fixed: normalised at rank 1 like every rank; ndeval: ndeval's raw gain at k = 1 (its bug)",
    ("fixed", "ndeval"),
)
_CLARKE = "Clarke et al., SIGIR 2008; ICTIR 2009; ndeval (TREC Web track)"
_CHAPELLE = "Chapelle et al., CIKM 2009; ndeval"
_AGRAWAL = "Agrawal et al., WSDM 2009; ndeval"


def alpha_ndcg(lists: RankedLists, m: Measure) -> np.ndarray:
    return intent.alpha_ndcg(lists, cutoff_of(m), number_of(m, "alpha", 0.5))


def alpha_dcg(lists: RankedLists, m: Measure) -> np.ndarray:
    return intent.alpha_dcg(lists, cutoff_of(m), number_of(m, "alpha", 0.5), text_of(m, "rank1", "fixed"))


def err_ia(lists: RankedLists, m: Measure) -> np.ndarray:
    return intent.err_ia(lists, cutoff_of(m), number_of(m, "alpha", 0.5), text_of(m, "rank1", "fixed"))


def nerr_ia(lists: RankedLists, m: Measure) -> np.ndarray:
    return intent.nerr_ia(lists, cutoff_of(m), number_of(m, "alpha", 0.5))


def nrbp(lists: RankedLists, m: Measure) -> np.ndarray:
    return intent.nrbp(lists, number_of(m, "alpha", 0.5), number_of(m, "beta", 0.5), False)


def n_nrbp(lists: RankedLists, m: Measure) -> np.ndarray:
    return intent.nrbp(lists, number_of(m, "alpha", 0.5), number_of(m, "beta", 0.5), True, m.param("empty") == "nan")


def precision_ia(lists: RankedLists, m: Measure) -> np.ndarray:
    return intent.precision_ia(lists, cutoff_of(m))


def subtopic_recall(lists: RankedLists, m: Measure) -> np.ndarray:
    return intent.subtopic_recall(lists, cutoff_of(m))


def ap_ia(lists: RankedLists, m: Measure) -> np.ndarray:
    return intent.ap_ia(lists)


ALPHA_NDCG = MeasureDef(
    "alpha_nDCG",
    alpha_ndcg,
    "alpha-nDCG@k: the novelty-discounted DCG (gain sum over the document's subtopics of (1 - alpha)^(earlier documents "
    "of that subtopic), 1/log2(rank + 1)) over that of ndeval's greedy ideal ranking (ndeval alpha-nDCG).",
    _FAMILY,
    cutoff="required",
    params=(_ALPHA,),
    intent_aware=True,
    peer_names=(PeerName("ndeval", "alpha-nDCG", "alpha_nDCG"),),
    citation=_CLARKE,
)
ALPHA_DCG = MeasureDef(
    "alpha_DCG",
    alpha_dcg,
    "alpha-DCG@k over the ideal-ideal: every subtopic covered at every rank, S (1 - alpha)^(r - 1) (ndeval alpha-DCG, "
    "collection-independent).",
    _FAMILY,
    cutoff="required",
    params=(_ALPHA, _RANK1),
    intent_aware=True,
    peer_names=(PeerName("ndeval", "alpha-DCG", "alpha_DCG(rank1=ndeval)"),),
    citation=_CLARKE,
)
ERR_IA = MeasureDef(
    "ERR_IA",
    err_ia,
    "ERR-IA@k: the novelty-discounted gains with discount 1/rank over the ideal-ideal's (ndeval ERR-IA).",
    _FAMILY,
    cutoff="required",
    params=(_ALPHA, _RANK1),
    intent_aware=True,
    peer_names=(PeerName("ndeval", "ERR-IA", "ERR_IA(rank1=ndeval)"),),
    citation=_CHAPELLE,
)
NERR_IA = MeasureDef(
    "nERR_IA",
    nerr_ia,
    "nERR-IA@k: ERR-IA over that of the greedy ideal ranking (ndeval nERR-IA).",
    _FAMILY,
    cutoff="required",
    params=(_ALPHA,),
    intent_aware=True,
    peer_names=(PeerName("ndeval", "nERR-IA", "nERR_IA"),),
    citation=_CHAPELLE,
)
NRBP = MeasureDef(
    "NRBP",
    nrbp,
    "novelty- and rank-biased precision over the whole list: (1 - (1 - alpha) beta) / S x sum of gain(r) beta^(r - 1) "
    "(ndeval NRBP).",
    _FAMILY,
    params=(_ALPHA, _BETA),
    intent_aware=True,
    peer_names=(PeerName("ndeval", "NRBP", "NRBP"),),
    citation=_CLARKE,
)
N_NRBP = MeasureDef(
    "nNRBP",
    n_nrbp,
    "NRBP over that of the greedy ideal ranking (ndeval nNRBP; 0, not ndeval's NaN, without a relevant subtopic: "
    "empty=nan gives ndeval's, and such a query is left out of the mean).",
    _FAMILY,
    params=(
        _ALPHA,
        _BETA,
        ParamInfo("empty", "text", "zero", "a query without a relevant subtopic: zero, or nan (ndeval: 0 / 0)", ("zero", "nan")),
    ),
    intent_aware=True,
    undefined_skipped=True,
    peer_names=(PeerName("ndeval", "nNRBP", "nNRBP(empty=nan)"),),
    citation=_CLARKE,
)
P_IA = MeasureDef(
    "P_IA",
    precision_ia,
    "intent-aware precision@k: (document, subtopic) relevant pairs in the top k over k x S (ndeval P-IA).",
    _FAMILY,
    cutoff="required",
    intent_aware=True,
    peer_names=(PeerName("ndeval", "P-IA", "P_IA"),),
    citation=_AGRAWAL,
)
STRECALL = MeasureDef(
    "StRecall",
    subtopic_recall,
    "subtopic recall@k: the subtopics covered by the top k over S (ndeval strec).",
    _FAMILY,
    cutoff="required",
    intent_aware=True,
    peer_names=(PeerName("ndeval", "strec", "StRecall"),),
    citation="Zhai, Cohen & Lafferty, SIGIR 2003; ndeval",
)
AP_IA = MeasureDef(
    "AP_IA",
    ap_ia,
    "intent-aware average precision: each subtopic's AP over the whole list, averaged over the S subtopics (ndeval MAP-IA).",
    _FAMILY,
    intent_aware=True,
    peer_names=(PeerName("ndeval", "MAP-IA", "AP_IA"),),
    citation=_AGRAWAL,
)

MEASURES = (ALPHA_NDCG, ALPHA_DCG, ERR_IA, NERR_IA, NRBP, N_NRBP, P_IA, STRECALL, AP_IA)
