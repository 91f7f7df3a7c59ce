"""Expected exposure of stochastic rankings (Diaz et al.; expeval, TREC Fair Ranking): measures that read a run's
sampled rankings.

>>> from harness.measures.spec import Measure
>>> EE_L.reads_samples, EE_L.higher(Measure("EE_L")), EE_R.higher(Measure("EE_R"))
(True, False, True)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from harness.errors import MeasureError
from harness.kernels import exposure
from harness.kernels._segments import RankedLists
from harness.measures.definition import MeasureDef, ParamInfo, PeerName, number_of, text_of
from harness.measures.spec import Measure

_FAMILY = "expected exposure"
_PARAMS = (
    ParamInfo(
        "model",
        "text",
        "gerr",
        "user model: gerr (patience p, a relevant document satisfies with chance u) or rbp (patience p)",
        ("gerr", "rbp"),
    ),
    ParamInfo("p", "number", 0.5, "the user's patience: the chance to go on to the next rank"),
    ParamInfo("u", "number", 0.5, "gerr: the chance a relevant document satisfies the user"),
    ParamInfo(
        "target",
        "text",
        "relevant",
        "relevant: the target exposure covers the relevant documents; judged: every judged one (expeval -C)",
        ("relevant", "judged"),
    ),
    ParamInfo("norm", "text", "raw", "raw, or expeval: (x - lb) / (ub - lb) with expeval's bounds", ("raw", "expeval")),
    ParamInfo(
        "compat",
        "text",
        "harness",
        "harness: a query the run misses has no exposure; expeval: expeval's values there (its bounds) and its inf for "
        "an all-zero exposure vector",
        ("harness", "expeval"),
    ),
)
_ABOUT = (
    "expected exposure (Diaz et al.): a stochastic run's sampled rankings (its sample column; one ranking per query "
    "without one) give each document its exposure averaged over the samples, e; the target e* shares each relevance "
    "level's exposure equally among its documents. "
)
_CITATION = "Diaz, Mitra, Ekstrand, Biega & Carterette, CIKM 2020; expeval (TREC Fair Ranking)"


def _check_user_model(m: Measure) -> None:
    problem = exposure.user_model_problem(number_of(m, "p", 0.5), number_of(m, "u", 0.5))
    if problem is not None:
        raise MeasureError(f"{m}: {problem}", hint="expeval's defaults: p=0.5, u=0.5")


def _expected_exposure(lists: RankedLists, m: Measure) -> np.ndarray:
    """The three measures (expeval's EE-L, EE-D, EE-R) of every query, computed together: queries x 3."""
    return exposure.per_query(
        lists,
        text_of(m, "model", "gerr"),
        number_of(m, "p", 0.5),
        number_of(m, "u", 0.5),
        m.param("target") == "judged",
        m.param("norm") == "expeval",
        m.param("compat") == "expeval",
    )


def ee_l(lists: RankedLists, m: Measure) -> np.ndarray:
    return _expected_exposure(lists, m)[:, exposure.MEASURES.index("EE-L")]


def ee_d(lists: RankedLists, m: Measure) -> np.ndarray:
    return _expected_exposure(lists, m)[:, exposure.MEASURES.index("EE-D")]


def ee_r(lists: RankedLists, m: Measure) -> np.ndarray:
    return _expected_exposure(lists, m)[:, exposure.MEASURES.index("EE-R")]


def _expected_exposure_measure(
    name: str, kernel: Callable[[RankedLists, Measure], np.ndarray], meaning: str, higher: bool
) -> MeasureDef:
    """One of expeval's three measures (``EE_L`` is its EE-L): per query, undefined without a relevant document."""
    return MeasureDef(
        name,
        kernel,
        _ABOUT + meaning,
        _FAMILY,
        params=_PARAMS,
        validate=_check_user_model,
        higher_is_better=higher,
        undefined_skipped=True,
        reads_samples=True,
        peer_names=(PeerName("expeval", name.replace("_", "-"), f"{name}(norm=expeval,compat=expeval)"),),
        citation=_CITATION,
    )


EE_L = _expected_exposure_measure(
    "EE_L", ee_l, "EE-L = ||e - e*||^2, the expected exposure loss; 0 when every document gets its deserved exposure.", False
)
EE_D = _expected_exposure_measure(
    "EE_D", ee_d, "EE-D = ||e||^2, the disparity: lower when the exposure is spread more equally.", False
)
EE_R = _expected_exposure_measure(
    "EE_R", ee_r, "EE-R = e . e*, the relevance: higher when the exposure goes where it is deserved.", True
)

MEASURES = (EE_L, EE_D, EE_R)
