"""The accuracy measures: every measure trec_eval 10.0 prints, and the ranking tools' variants of them.

Each definition names its kernel (a function of the ranked lists and the measure, below it) and states its
facts; trec_eval's names are ``trec_name`` (uncut) and ``trec_cut_name`` (``P`` -> ``P_5``).

>>> from harness.measures.spec import Measure
>>> [d.name for d in MEASURES][:5]
['NumQ', 'NumRet', 'NumRel', 'NumRelRet', 'NumNonRelJudgedRet']
>>> AP.trec_cut_name, AP.range_of(Measure("AP", cutoff=10))
('map_cut', (0.0, 1.0))
"""

from __future__ import annotations

import numpy as np

from harness.kernels import average_precision, counts, dcg, incomplete, interpolated, precision, reciprocal_rank, user_models
from harness.kernels._segments import RankedLists
from harness.measures.definition import (
    ELEVEN_POINTS,
    GAIN,
    GAINS,
    REL,
    MeasureDef,
    ParamInfo,
    PeerName,
    gain_scheme,
    number_of,
    rel_of,
)
from harness.measures.spec import Measure

_FAMILY = "accuracy"
_UNIT = (0.0, 1.0)  # a proportion, whatever the run and judgments: the range a guard's betting bound holds in
_DENOMINATOR = ParamInfo(
    "denominator",
    "text",
    None,
    "AP@k divides by 'R' (trec_eval) or 'min_R_k' (MS Recommenders); default: the ap_denominator convention",
    ("R", "min_R_k"),
)
_BETA = ParamInfo("beta", "number", 1.0, "weight of recall against precision")


# Counts -------------------------------------------------------------------------------------------------------------
def num_q(lists: RankedLists, m: Measure) -> np.ndarray:
    return np.ones(lists.n_queries)


def num_ret(lists: RankedLists, m: Measure) -> np.ndarray:
    return counts.num_ret(lists)


def num_rel(lists: RankedLists, m: Measure) -> np.ndarray:
    return counts.num_rel(lists, rel_of(m))


def num_rel_ret(lists: RankedLists, m: Measure) -> np.ndarray:
    return counts.num_rel_ret(lists, rel_of(m))


def num_nonrel_judged_ret(lists: RankedLists, m: Measure) -> np.ndarray:
    return counts.num_nonrel_judged_ret(lists, rel_of(m))


NUMQ = MeasureDef(
    "NumQ",
    num_q,
    "Number of queries evaluated.",
    _FAMILY,
    aggregate="count",
    trec_name="num_q",
    integer=True,
    ties_average_ok=True,
    defined_without_run=True,
)
NUMRET = MeasureDef(
    "NumRet", num_ret, "Documents retrieved.", _FAMILY, aggregate="sum", trec_name="num_ret", integer=True, ties_average_ok=True
)
NUMREL = MeasureDef(
    "NumRel",
    num_rel,
    "Relevant judged documents, retrieved or not.",
    _FAMILY,
    params=(REL,),
    aggregate="sum",
    trec_name="num_rel",
    integer=True,
    ties_average_ok=True,
    defined_without_run=True,
)
NUMRELRET = MeasureDef(
    "NumRelRet",
    num_rel_ret,
    "Relevant documents retrieved.",
    _FAMILY,
    params=(REL,),
    aggregate="sum",
    trec_name="num_rel_ret",
    integer=True,
    ties_average_ok=True,
)
NUMNONRELJUDGEDRET = MeasureDef(
    "NumNonRelJudgedRet",
    num_nonrel_judged_ret,
    "Retrieved documents judged non-relevant.",
    _FAMILY,
    params=(REL,),
    aggregate="sum",
    trec_name="num_nonrel_judged_ret",
    integer=True,
    ties_average_ok=True,
)


# Precision and recall -----------------------------------------------------------------------------------------------
def ap(lists: RankedLists, m: Measure) -> np.ndarray:
    chosen = m.param("denominator")
    min_r_k = lists.ap_min_r_k if chosen is None else chosen == "min_R_k"
    return average_precision.average_precision(lists, m.cutoff, rel_of(m), min_r_k)


def gmap(lists: RankedLists, m: Measure) -> np.ndarray:
    return average_precision.average_precision(lists, None, rel_of(m))


def p(lists: RankedLists, m: Measure) -> np.ndarray:
    return precision.precision_at(lists, m.cutoff, rel_of(m))


def r(lists: RankedLists, m: Measure) -> np.ndarray:
    return precision.recall_at(lists, m.cutoff, rel_of(m))


def rel_p(lists: RankedLists, m: Measure) -> np.ndarray:
    return precision.relative_precision_at(lists, m.cutoff, rel_of(m))


def success(lists: RankedLists, m: Measure) -> np.ndarray:
    return precision.success_at(lists, m.cutoff, rel_of(m))


def f(lists: RankedLists, m: Measure) -> np.ndarray:
    return precision.f_at(lists, m.cutoff, rel_of(m), number_of(m, "beta", 1.0))


def rprec(lists: RankedLists, m: Measure) -> np.ndarray:
    return precision.r_precision(lists, rel_of(m))


def rprec_mult(lists: RankedLists, m: Measure) -> np.ndarray:
    return precision.r_precision_mult(lists, number_of(m, "mult", 1.0), rel_of(m))


def set_p(lists: RankedLists, m: Measure) -> np.ndarray:
    return precision.precision_at(lists, None, rel_of(m))


def set_r(lists: RankedLists, m: Measure) -> np.ndarray:
    return precision.recall_at(lists, None, rel_of(m))


def set_rel_p(lists: RankedLists, m: Measure) -> np.ndarray:
    return precision.relative_precision_at(lists, None, rel_of(m))


def set_ap(lists: RankedLists, m: Measure) -> np.ndarray:
    return precision.set_average_precision(lists, rel_of(m))


def set_f(lists: RankedLists, m: Measure) -> np.ndarray:
    return precision.f_at(lists, None, rel_of(m), number_of(m, "beta", 1.0))


def utility(lists: RankedLists, m: Measure) -> np.ndarray:
    worth = (number_of(m, "a", 1.0), number_of(m, "b", -1.0), number_of(m, "c", 0.0), number_of(m, "d", 0.0))
    return precision.utility(lists, *worth, rel_of(m))


AP = MeasureDef(
    "AP",
    ap,
    "Average precision: mean of P@i over the ranks i of relevant documents, over R (map, map_cut.k).",
    _FAMILY,
    reads_conventions=frozenset({"ap_denominator"}),
    cutoff="optional",
    params=(REL, _DENOMINATOR),
    trec_name="map",
    trec_cut_name="map_cut",
    aliases=("MAP",),
    peer_names=(PeerName("torchmetrics", "RetrievalMAP", "AP", read=True),),
    value_range=_UNIT,
    citation="Harman, TREC-1 (1992)",
)
GMAP = MeasureDef(
    "GMAP",
    gmap,
    "Geometric mean of AP over queries (values floored at 1e-5).",
    _FAMILY,
    params=(REL,),
    aggregate="gmean",
    trec_name="gm_map",
    citation="Robertson, SIGIR 2006",
)
P = MeasureDef(
    "P",
    p,
    "Precision at k: relevant in the top k over k (short lists padded with non-relevant).",
    _FAMILY,
    reads_conventions=frozenset({"short_lists"}),
    cutoff="required",
    params=(REL,),
    trec_cut_name="P",
    aliases=("Precision",),
    peer_names=(PeerName("torchmetrics", "RetrievalPrecision", "P", read=True),),
    ties_average_ok=True,
    value_range=_UNIT,
)
R = MeasureDef(
    "R",
    r,
    "Recall at k: relevant in the top k over R.",
    _FAMILY,
    cutoff="required",
    params=(REL,),
    trec_cut_name="recall",
    aliases=("Recall",),
    peer_names=(PeerName("torchmetrics", "RetrievalRecall", "R", read=True),),
    ties_average_ok=True,
    value_range=_UNIT,
)
RELP = MeasureDef(
    "RelP",
    rel_p,
    "Relative precision at k: relevant in the top k over min(k, R).",
    _FAMILY,
    cutoff="required",
    params=(REL,),
    trec_cut_name="relative_P",
    ties_average_ok=True,
)
SUCCESS = MeasureDef(
    "Success",
    success,
    "1 if a relevant document is in the top k, else 0.",
    _FAMILY,
    cutoff="optional",
    params=(REL,),
    trec_cut_name="success",
    aliases=("Hit", "HitRate"),
    peer_names=(
        PeerName("ranx", "hit_rate", "Success", read=True),
        PeerName("torchmetrics", "RetrievalHitRate", "Success", read=True),
    ),
    value_range=_UNIT,
)
F = MeasureDef(
    "F",
    f,
    "F-beta of P@k and R@k.",
    _FAMILY,
    reads_conventions=frozenset({"short_lists"}),
    cutoff="required",
    params=(REL, _BETA),
    aliases=("F1",),
    value_range=_UNIT,
)
RPREC = MeasureDef(
    "Rprec",
    rprec,
    "Precision at rank R.",
    _FAMILY,
    params=(REL,),
    trec_name="Rprec",
    peer_names=(
        PeerName("ranx", "r-precision", "Rprec", read=True),
        PeerName("torchmetrics", "RetrievalRPrecision", "Rprec", read=True),
    ),
    value_range=_UNIT,
)
RPRECMULT = MeasureDef(
    "RprecMult",
    rprec_mult,
    "Precision at mult x R documents.",
    _FAMILY,
    params=(REL, ParamInfo("mult", "number", 1.0, "multiple of R")),
    trec_name="Rprec_mult",
)
SETP = MeasureDef(
    "SetP",
    set_p,
    "Relevant retrieved over retrieved.",
    _FAMILY,
    params=(REL,),
    trec_name="set_P",
    ties_average_ok=True,
    value_range=_UNIT,
)
SETR = MeasureDef(
    "SetR",
    set_r,
    "Relevant retrieved over R.",
    _FAMILY,
    params=(REL,),
    trec_name="set_recall",
    ties_average_ok=True,
    value_range=_UNIT,
)
SETRELP = MeasureDef(
    "SetRelP",
    set_rel_p,
    "Relevant retrieved over min(retrieved, R).",
    _FAMILY,
    params=(REL,),
    trec_name="set_relative_P",
    ties_average_ok=True,
)
SETAP = MeasureDef(
    "SetAP",
    set_ap,
    "set_P x set_recall.",
    _FAMILY,
    params=(REL,),
    trec_name="set_map",
    ties_average_ok=True,
    value_range=_UNIT,
)
SETF = MeasureDef(
    "SetF",
    set_f,
    "F-beta of set_P and set_recall.",
    _FAMILY,
    params=(REL, ParamInfo("beta", "number", 1.0, "weight of recall")),
    trec_name="set_F",
    ties_average_ok=True,
    value_range=_UNIT,
)
UTILITY = MeasureDef(
    "Utility",
    utility,
    "a*rel_ret + b*nonrel_ret + c*rel_not_ret + d*nonrel_not_ret.",
    _FAMILY,
    params=(
        REL,
        ParamInfo("a", "number", 1.0, "worth of a relevant retrieved document"),
        ParamInfo("b", "number", -1.0, "worth of a non-relevant retrieved document"),
        ParamInfo("c", "number", 0.0, "worth of a relevant document not retrieved"),
        ParamInfo("d", "number", 0.0, "worth of a non-relevant document not retrieved"),
    ),
    trec_name="utility",
    ties_average_ok=True,
)


# Rank-sensitive binary measures -------------------------------------------------------------------------------------
def rr(lists: RankedLists, m: Measure) -> np.ndarray:
    return reciprocal_rank.reciprocal_rank(lists, m.cutoff, rel_of(m))


def bpref(lists: RankedLists, m: Measure) -> np.ndarray:
    return incomplete.bpref(lists, rel_of(m))


def inf_ap(lists: RankedLists, m: Measure) -> np.ndarray:
    return incomplete.inferred_ap(lists, rel_of(m))


def iprec(lists: RankedLists, m: Measure) -> np.ndarray:
    return interpolated.iprec_at_recall(lists, (number_of(m, "recall", 0.0),), rel_of(m))[:, 0]


def iprec_avg(lists: RankedLists, m: Measure) -> np.ndarray:
    recalls = m.param("recalls", ELEVEN_POINTS)
    return interpolated.average_interpolated_precision(lists, recalls, rel_of(m))  # type: ignore[arg-type]


def bin_g(lists: RankedLists, m: Measure) -> np.ndarray:
    return user_models.bin_g(lists, rel_of(m))


RR = MeasureDef(
    "RR",
    rr,
    "Reciprocal rank of the first relevant document (within k).",
    _FAMILY,
    cutoff="optional",
    params=(REL,),
    trec_name="recip_rank",
    aliases=("MRR", "RecipRank"),
    peer_names=(PeerName("torchmetrics", "RetrievalMRR", "RR", read=True),),
    value_range=_UNIT,
)
BPREF = MeasureDef(
    "Bpref",
    bpref,
    "Binary preference: judged documents only.",
    _FAMILY,
    params=(REL,),
    trec_name="bpref",
    value_range=_UNIT,
    citation="Buckley and Voorhees, SIGIR 2004",
)
GMBPREF = MeasureDef(
    "GMBpref", bpref, "Geometric mean of bpref over queries.", _FAMILY, params=(REL,), aggregate="gmean", trec_name="gm_bpref"
)
INFAP = MeasureDef(
    "infAP",
    inf_ap,
    "Inferred AP for sampled judgments.",
    _FAMILY,
    params=(REL,),
    trec_name="infAP",
    citation="Yilmaz and Aslam, CIKM 2006",
)
IPREC = MeasureDef(
    "IPrec",
    iprec,
    "Interpolated precision at a recall level (IPrec@0.5: at recall 0.5, as ir_measures writes it).",
    _FAMILY,
    params=(REL, ParamInfo("recall", "number", None, "recall level in [0, 1]", required=True)),
    cutoff_param="recall",
    trec_name="iprec_at_recall",
    reads_conventions=frozenset({"iprec_cut"}),
    value_range=_UNIT,
)
IPRECAVG = MeasureDef(
    "IPrecAvg",
    iprec_avg,
    "Interpolated precision averaged over recall levels (11-point average).",
    _FAMILY,
    params=(REL, ParamInfo("recalls", "numbers", ELEVEN_POINTS, "recall levels")),
    trec_name="11pt_avg",
    aliases=("11pt_avg",),
    reads_conventions=frozenset({"iprec_cut"}),
    value_range=_UNIT,
)
BING = MeasureDef("binG", bin_g, "Binary G (trec_eval, experimental).", _FAMILY, params=(REL,), trec_name="binG")


# Graded measures ----------------------------------------------------------------------------------------------------
def cg(lists: RankedLists, m: Measure) -> np.ndarray:
    return dcg.cumulative_gain(lists, m.cutoff, gain_scheme(m, lists))


def dcg_(lists: RankedLists, m: Measure) -> np.ndarray:
    return dcg.dcg(lists, m.cutoff, gain_scheme(m, lists))


def idcg(lists: RankedLists, m: Measure) -> np.ndarray:
    return dcg.ideal_dcg(lists, m.cutoff, gain_scheme(m, lists))


def ndcg(lists: RankedLists, m: Measure) -> np.ndarray:
    return dcg.ndcg(lists, m.cutoff, gain_scheme(m, lists))


def ndcg_rel(lists: RankedLists, m: Measure) -> np.ndarray:
    return dcg.ndcg_rel(lists, gain_scheme(m, lists))


def r_ndcg(lists: RankedLists, m: Measure) -> np.ndarray:
    return dcg.r_ndcg(lists, gain_scheme(m, lists), rel_of(m))


def g(lists: RankedLists, m: Measure) -> np.ndarray:
    return user_models.g_measure(lists, gain_scheme(m, lists))


def rbp(lists: RankedLists, m: Measure) -> np.ndarray:
    return user_models.rbp(lists, number_of(m, "p", 0.9), gain_scheme(m, lists))


def rbp_residual(lists: RankedLists, m: Measure) -> np.ndarray:
    return user_models.rbp_residual(lists)


def err(lists: RankedLists, m: Measure) -> np.ndarray:
    return user_models.expected_reciprocal_rank(lists, m.cutoff, number_of(m, "max_rel", 4.0))


_JARVELIN = "Järvelin and Kekäläinen, TOIS 2002"
CG = MeasureDef("CG", cg, "Cumulative gain of the top k.", _FAMILY, cutoff="optional", params=(GAIN, GAINS), ties_average_ok=True)
DCG = MeasureDef(
    "DCG",
    dcg_,
    "Discounted cumulative gain, 1/log2(rank+1).",
    _FAMILY,
    cutoff="optional",
    params=(GAIN, GAINS),
    trec_name="dcg",
    ties_average_ok=True,
    citation=_JARVELIN,
)
IDCG = MeasureDef(
    "IDCG",
    idcg,
    "DCG of the ideal ranking of the judgments.",
    _FAMILY,
    reads_conventions=frozenset({"ideal_from", "short_lists"}),
    cutoff="optional",
    params=(GAIN, GAINS),
    trec_name="ideal_dcg",
    ties_average_ok=True,
)
NDCG = MeasureDef(
    "nDCG",
    ndcg,
    "DCG over the ideal DCG (ndcg, ndcg_cut.k).",
    _FAMILY,
    reads_conventions=frozenset({"ideal_from", "short_lists"}),
    cutoff="optional",
    params=(GAIN, GAINS),
    trec_name="ndcg",
    trec_cut_name="ndcg_cut",
    peer_names=(
        PeerName("ranx", "ndcg_burges", "nDCG(gain=exp)", read=True),
        PeerName("torchmetrics", "RetrievalNormalizedDCG", "nDCG", read=True),
        PeerName("recbole", "NDCG", "nDCG(gain=binary)"),
    ),
    ties_average_ok=True,
    value_range=_UNIT,
    citation=_JARVELIN,
)
NDCGREL = MeasureDef(
    "nDCGRel",
    ndcg_rel,
    "nDCG averaged over the relevant documents.",
    _FAMILY,
    reads_conventions=frozenset({"ideal_from"}),
    params=(GAIN, GAINS),
    trec_name="ndcg_rel",
)
RNDCG = MeasureDef(
    "RnDCG",
    r_ndcg,
    "nDCG averaged at the R-levels.",
    _FAMILY,
    reads_conventions=frozenset({"ideal_from"}),
    params=(REL, GAIN, GAINS),
    trec_name="Rndcg",
)
G = MeasureDef(
    "G",
    g,
    "Normalized gain G (trec_eval, experimental).",
    _FAMILY,
    reads_conventions=frozenset({"ideal_from"}),
    params=(GAIN, GAINS),
    trec_name="G",
)
RBP = MeasureDef(
    "RBP",
    rbp,
    "Rank-biased precision with persistence p.",
    _FAMILY,
    params=(ParamInfo("p", "number", 0.9, "persistence"), GAIN, GAINS),
    trec_name="rbp",
    citation="Moffat and Zobel, TOIS 2008",
)
RBPRESID = MeasureDef(
    "RBPResid",
    rbp_residual,
    "RBP residual from unjudged documents (p = 0.9).",
    _FAMILY,
    higher_is_better=False,
    trec_name="rbp_resid",
)
ERR = MeasureDef(
    "ERR",
    err,
    "Expected reciprocal rank.",
    _FAMILY,
    cutoff="optional",
    params=(ParamInfo("max_rel", "number", 4.0, "highest grade"),),
    value_range=_UNIT,
    citation="Chapelle, Metzler, Zhang and Grinspan, CIKM 2009",
)


# Judgment coverage --------------------------------------------------------------------------------------------------
def judged(lists: RankedLists, m: Measure) -> np.ndarray:
    return counts.judged_at(lists, m.cutoff)


def unjudged(lists: RankedLists, m: Measure) -> np.ndarray:
    return counts.unjudged_at(lists, m.cutoff or 0)


JUDGED = MeasureDef(
    "Judged",
    judged,
    "Fraction of the top min(k, n) that is judged.",
    _FAMILY,
    cutoff="optional",
    ties_average_ok=True,
    value_range=_UNIT,
)
UNJ = MeasureDef(
    "Unj",
    unjudged,
    "Unjudged documents in the top k over k.",
    _FAMILY,
    cutoff="required",
    higher_is_better=False,
    trec_cut_name="unj",
    ties_average_ok=True,
)

MEASURES = (
    NUMQ,
    NUMRET,
    NUMREL,
    NUMRELRET,
    NUMNONRELJUDGEDRET,
    AP,
    GMAP,
    P,
    R,
    RELP,
    SUCCESS,
    F,
    RPREC,
    RPRECMULT,
    SETP,
    SETR,
    SETRELP,
    SETAP,
    SETF,
    UTILITY,
    RR,
    BPREF,
    GMBPREF,
    INFAP,
    IPREC,
    IPRECAVG,
    BING,
    CG,
    DCG,
    IDCG,
    NDCG,
    NDCGREL,
    RNDCG,
    G,
    RBP,
    RBPRESID,
    ERR,
    JUDGED,
    UNJ,
)
