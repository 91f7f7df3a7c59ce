"""The fairness, exposure and propensity measures: parity between item groups and user groups, the spread of
exposure, and propensity-scored precision, as Elliot, LensKit and pyxclib compute them.

Most have one value per run from sums over users (``parts``: each user's terms from that user's rows alone;
``finish``: the value from their weighted sums), so a bootstrap replicate or a swap of the paired test weighs the
same terms. An item group is a column of the catalogue (``group=provider``).

>>> from harness.measures.spec import Measure
>>> reo = Measure("REO", (("group", "provider"),), 10)
>>> REO.is_system(reo), sorted(REO.catalogue_columns(reo))
(True, ['provider'])
>>> BIASDISPARITY.target_of(Measure("BiasDisparity", (("kind", "BR"),), 10))
1.0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from harness.errors import MeasureError
from harness.kernels import beyond
from harness.kernels import fairness as kernels
from harness.kernels._segments import RankedLists
from harness.measures.beyond_accuracy import (
    CATALOG,
    ELLIOT_REL,
    HEAD,
    items_of,
    long_tail,
    needs_train,
    outside_universe,
    universe_needs,
)
from harness.measures.definition import (
    REL,
    MeasureDef,
    ParamInfo,
    PeerName,
    SystemValue,
    When,
    cutoff_of,
    not_per_query,
    number_of,
    rel_of,
    text_of,
)
from harness.measures.spec import Measure

_FAMILY = "fairness"
_INF = float("inf")
_A = ParamInfo("A", "number", 0.55, "propensity parameter A (pyxclib's default; 0.5 Wikipedia, 0.6 Amazon)")
_B = ParamInfo("B", "number", 1.5, "propensity parameter B (pyxclib's default; 0.4 Wikipedia, 2.6 Amazon)")
_PS_NORM = ParamInfo(
    "norm",
    "text",
    "none",
    "none: each user's value, the paper's form (per query); pyxclib: divided by the propensity-ideal list's, "
    "as a ratio of the means over users (a system measure)",
    ("none", "pyxclib"),
)
_GROUP = ParamInfo("group", "text", None, "the catalogue column whose values are the item groups", required=True)
_EXPOSURE_WEIGHT = ParamInfo(
    "weight", "text", "geometric", "exposure of a rank: geometric, log or uniform", ("geometric", "log", "uniform")
)
_PATIENCE = ParamInfo("patience", "number", 0.85, "the geometric weight's patience")
_USERS = ParamInfo("users", "text", "relevant", "relevant: users with a relevant test item (Elliot); all", ("relevant", "all"))


def _judged(m: Measure) -> frozenset[str]:
    return frozenset({"judged"})


def _score_for_rating(m: Measure) -> frozenset[str]:
    return frozenset({"score"}) if m.param("gain") == "rating" else frozenset()


def _group_needs(m: Measure) -> frozenset[str]:
    return frozenset({"train", "items", f"column:{m.param('group')}"})


def _share_needs(m: Measure) -> frozenset[str]:
    return frozenset({"items", f"column:{m.param('group')}"})


def _user_group_needs(m: Measure) -> frozenset[str]:
    return frozenset({"user_groups"})


def _bias_needs(m: Measure) -> frozenset[str]:
    return frozenset({"train", "items", "user_groups", f"column:{m.param('group')}"})


def _catalogue_needs(m: Measure) -> frozenset[str]:
    return universe_needs(m, "items")


def ratio_finish(lists: RankedLists, m: Measure, sums: np.ndarray) -> np.ndarray:
    """A system value that is the ratio of two sums over users (pyxclib's PSP, an exposure share)."""
    return kernels.ratio_finish(sums)


# Propensity -----------------------------------------------------------------------------------------------------------
def _propensity_args(m: Measure) -> tuple[int, float | None, float, float]:
    return cutoff_of(m), rel_of(m), number_of(m, "A", 0.55), number_of(m, "B", 1.5)


def psp_parts(lists: RankedLists, m: Measure) -> np.ndarray:
    return kernels.psp_parts(lists, *_propensity_args(m))


def psp(lists: RankedLists, m: Measure) -> np.ndarray:
    return psp_parts(lists, m)[:, 0]


def psndcg_parts(lists: RankedLists, m: Measure) -> np.ndarray:
    return kernels.psndcg_parts(lists, *_propensity_args(m))


def psndcg(lists: RankedLists, m: Measure) -> np.ndarray:
    return psndcg_parts(lists, m)[:, 0]


def _propensity_measure(
    name: str,
    kernel: Callable[[RankedLists, Measure], np.ndarray],
    parts: Callable[[RankedLists, Measure], np.ndarray],
    description: str,
    pyxclib_name: str,
) -> MeasureDef:
    """PSP and PSnDCG: per user the first of their two terms; with norm=pyxclib one value per run, the ratio of their
    sums over users (pyxclib's)."""
    return MeasureDef(
        name,
        kernel,
        description,
        _FAMILY,
        cutoff="required",
        params=(REL, _A, _B, _PS_NORM),
        needs=needs_train,
        item_reads=_judged,
        system=SystemValue(parts=parts, finish=ratio_finish, when=When("norm", "pyxclib")),
        peer_names=(PeerName("pyxclib", pyxclib_name, f"{name}(norm=pyxclib)"),),
        citation="Jain, Prabhu & Varma, KDD 2016",
    )


PSP = _propensity_measure(
    "PSP",
    psp,
    psp_parts,
    "propensity-scored precision (Jain et al.): the relevant items' inverse propensities 1 + C (n_i + B)^-A in the "
    "top k, over k; n_i the item's training users, C = (ln N - 1)(B + 1)^A. norm=pyxclib: over the same for the "
    "ideal list, a ratio of means over users (pyxclib psprecision).",
    "psprecision",
)
PSNDCG = _propensity_measure(
    "PSnDCG",
    psndcg,
    psndcg_parts,
    "propensity-scored nDCG (Jain et al.): the DCG of the relevant items' inverse propensities over the binary ideal "
    "DCG of min(R, k) items. norm=pyxclib: over the same for the propensity-ideal list, a ratio of means over users "
    "(pyxclib psndcg).",
    "psndcg",
)


# Exposure -------------------------------------------------------------------------------------------------------------
def exposure_gini(lists: RankedLists, m: Measure, weights: np.ndarray) -> np.ndarray:
    exposures = kernels.exposure(lists, m.cutoff, text_of(m, "weight", "geometric"), number_of(m, "patience", 0.85), weights)
    catalog = text_of(m, "catalog", "items")
    size = beyond.universe_size(items_of(lists), catalog) + outside_universe(lists, m, exposures, "items")
    values: np.ndarray = np.maximum(beyond.gini(exposures, size, "recbole"), 0.0)
    return values


def _category_of(lists: RankedLists, m: Measure) -> tuple[np.ndarray, int]:
    """(item group per code, the group index of the measure's ``category``): a value of its ``group`` column, a label
    of a text column (its column holds each item's index into the sorted labels)."""
    items = items_of(lists)
    column, category = str(m.param("group")), m.param("category")
    values = items.columns[column]
    distinct = np.unique(values[~np.isnan(values)])
    labels = (items.labels or {}).get(column)
    if labels is not None:
        name = category if isinstance(category, str) else format(float(category), "g")  # type: ignore[arg-type]
        if name not in labels:
            raise MeasureError(f"{m}: category {name!r} is not a label of {column}", hint=f"its labels: {', '.join(labels)}")
        value = float(labels.index(name))
    elif isinstance(category, str):
        raise MeasureError(
            f"{m}: {column} holds numbers, not labels like {category!r}",
            hint=f"its values: {', '.join(format(v, 'g') for v in distinct)}",
        )
    else:
        value = float(category)  # type: ignore[arg-type]
    if value not in distinct:
        raise MeasureError(
            f"{m}: category {value:g} is not a value of {column}",
            hint=f"its values: {', '.join(format(v, 'g') for v in distinct)}",
        )
    group, _ = kernels.item_groups(items, column)
    return group, int(np.searchsorted(distinct, value))


def _groups_of(lists: RankedLists, m: Measure) -> tuple[np.ndarray, int]:
    if m.param("group") is None:  # PopREO, PopRSP: Elliot's short head and long tail
        return kernels.popularity_groups(long_tail(lists, m), items_of(lists).in_train), 2
    return kernels.item_groups(items_of(lists), str(m.param("group")))


def _group_names(lists: RankedLists, m: Measure) -> tuple[str, ...]:
    """The names of the item groups ``_groups_of`` numbers: a column's labels or values, sorted, or Elliot's two."""
    if m.param("group") is None:
        return ("short head", "long tail")
    items = items_of(lists)
    column = str(m.param("group"))
    labels = (items.labels or {}).get(column)
    values = items.columns[column]
    present = np.unique(values[~np.isnan(values)])
    return tuple(labels[int(v)] for v in present) if labels is not None else tuple(format(v, "g") for v in present)


def exposure_share_parts(lists: RankedLists, m: Measure) -> np.ndarray:
    weight, patience = text_of(m, "weight", "geometric"), number_of(m, "patience", 0.85)
    return kernels.exposure_share_parts(lists, m.cutoff, *_category_of(lists, m), weight, patience)


def exposure_shares(lists: RankedLists, m: Measure, sums: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
    weight, patience = text_of(m, "weight", "geometric"), number_of(m, "patience", 0.85)
    return _group_names(lists, m), kernels.group_exposure_shares(lists, m.cutoff, *_groups_of(lists, m), weight, patience)


_DIAZ = "Diaz et al., CIKM 2020; LensKit"
EXPOSUREGINI = MeasureDef(
    "ExposureGini",
    not_per_query,
    "Gini index of the items' exposure summed over the lists (LensKit ExposureGini), over the catalogue (items never "
    "shown count 0): weight=geometric patience^(rank-1), log 1/log2(max(rank, 2)), uniform 1 (LensKit ListGini). 0 "
    "when exposure is equal. A system measure.",
    _FAMILY,
    cutoff="optional",
    system=SystemValue(kernel=exposure_gini, bounds=(0.0, 1.0)),
    higher_is_better=False,
    needs=_catalogue_needs,
    params=(ParamInfo("catalog", "text", "items", CATALOG.doc, CATALOG.choices), _EXPOSURE_WEIGHT, _PATIENCE),
    peer_names=(
        PeerName("lenskit", "ExposureGini", "ExposureGini"),
        PeerName("lenskit", "ListGini", "ExposureGini(weight=uniform)"),
    ),
    citation=_DIAZ,
)
EXPOSURESHARE = MeasureDef(
    "ExposureShare",
    not_per_query,
    "the share of the exposure the lists give to one item group (a value of a catalogue column): its items' exposure "
    "summed over the top k of every list, over all the exposure (weight=geometric patience^(rank-1), log, uniform: "
    "the share of recommendations). A system measure.",
    _FAMILY,
    cutoff="required",
    system=SystemValue(parts=exposure_share_parts, finish=ratio_finish, bounds=(0.0, 1.0), by_group=exposure_shares),
    needs=_share_needs,
    params=(
        _GROUP,
        ParamInfo("category", "label", None, "the group: a value (number or label) of the group column", required=True),
        _EXPOSURE_WEIGHT,
        _PATIENCE,
    ),
    citation="Singh & Joachims, KDD 2018",
)


# Parity between item groups --------------------------------------------------------------------------------------------
def _parity(opportunity: bool) -> Callable[[RankedLists, Measure], np.ndarray]:
    def parity_parts(lists: RankedLists, m: Measure) -> np.ndarray:
        return kernels.parity_parts(lists, m.cutoff, *_groups_of(lists, m), opportunity, rel_of(m))

    return parity_parts


def parity_finish(lists: RankedLists, m: Measure, sums: np.ndarray) -> np.ndarray:
    return kernels.parity_finish(sums)


def parity_by_group(lists: RankedLists, m: Measure, sums: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
    return _group_names(lists, m), kernels.parity_probabilities(sums)[0]


_PARITY = (
    "std(P) / mean(P) over the item groups (population std), P_g summed over users (Zhu et al.; Elliot). "
    "0 is parity. A system measure."
)
_ZHU = "Zhu, Wang & Caverlee, SIGIR 2020"


def _parity_measure(
    name: str, description: str, opportunity: bool, params: tuple[ParamInfo, ...], needs: Callable[[Measure], frozenset[str]]
) -> MeasureDef:
    """RSP and REO, over the catalogue's groups or Elliot's two popularity groups: one value per run from each group's
    P_g summed over users; REO reads which items are relevant."""
    return MeasureDef(
        name,
        not_per_query,
        description,
        _FAMILY,
        cutoff="required",
        params=params,
        needs=needs,
        system=SystemValue(parts=_parity(opportunity), finish=parity_finish, bounds=(0.0, _INF), by_group=parity_by_group),
        higher_is_better=False,
        item_reads=_judged if opportunity else None,
        peer_names=(PeerName("elliot", name, name),),
        citation=_ZHU,
    )


RSP = _parity_measure(
    "RSP",
    "ranking-based statistical parity: P_g = top-k items of group g / items of g outside the user's training, " + _PARITY,
    False,
    (_GROUP,),
    _group_needs,
)
REO = _parity_measure(
    "REO",
    "ranking-based equal opportunity: P_g = relevant top-k items of group g / relevant test items of g outside the "
    "user's training, " + _PARITY,
    True,
    (_GROUP, ELLIOT_REL),
    _group_needs,
)
POPRSP = _parity_measure(
    "PopRSP",
    "RSP over two popularity groups, Elliot's short head and long tail of the training items.",
    False,
    (HEAD,),
    needs_train,
)
POPREO = _parity_measure(
    "PopREO",
    "REO over two popularity groups, Elliot's short head and long tail of the training items.",
    True,
    (HEAD, ELLIOT_REL),
    needs_train,
)


# Mean absolute differences between groups ------------------------------------------------------------------------------
def item_mad_parts(lists: RankedLists, m: Measure) -> Any:
    group, _ = _groups_of(lists, m)
    gain, users = text_of(m, "gain", "ranking"), text_of(m, "users", "relevant")
    return kernels.item_mad_parts(lists, m.cutoff, group, gain, rel_of(m), users)


def item_mad_finish(lists: RankedLists, m: Measure, sums: np.ndarray) -> np.ndarray:
    return kernels.mad_finish(sums, *_groups_of(lists, m), text_of(m, "empty_groups", "skip"))


def item_group_gains(lists: RankedLists, m: Measure, sums: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
    return _group_names(lists, m), kernels.item_group_gains(sums, *_groups_of(lists, m))[0]


def user_mad_parts(lists: RankedLists, m: Measure) -> np.ndarray:
    gain, users = text_of(m, "gain", "ranking"), text_of(m, "users", "relevant")
    return kernels.user_mad_parts(lists, m.cutoff, gain, rel_of(m), users)


def user_mad_finish(lists: RankedLists, m: Measure, sums: np.ndarray) -> np.ndarray:
    return kernels.user_mad_finish(sums, text_of(m, "empty_groups", "skip"))


def user_group_values(lists: RankedLists, m: Measure, sums: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
    names = lists.items.user_group_names if lists.items is not None else ()
    return names, kernels.parity_probabilities(sums)[0]


_DELDJOO = "Deldjoo et al., UMUAI 2021"
ITEMMAD = MeasureDef(
    "ItemMAD",
    not_per_query,
    "mean absolute difference between item groups of the recommended items' mean gain (Elliot ItemMADranking; "
    "gain=rating: the predicted score of a relevant item, ItemMADrating). No rank discount. A system measure; 0 is "
    "parity.",
    _FAMILY,
    cutoff="required",
    system=SystemValue(parts=item_mad_parts, finish=item_mad_finish, bounds=(0.0, _INF), by_group=item_group_gains),
    higher_is_better=False,
    needs=_group_needs,
    item_reads=_score_for_rating,
    params=(
        _GROUP,
        ELLIOT_REL,
        ParamInfo(
            "gain", "text", "ranking", "ranking: 2^(r - t + 1) - 1 for a relevant item; rating: its score", ("ranking", "rating")
        ),
        _USERS,
        ParamInfo(
            "empty_groups",
            "text",
            "skip",
            "skip: a group without recommended items leaves the pairs; nan: the value is NaN (Elliot)",
            ("skip", "nan"),
        ),
    ),
    peer_names=(
        PeerName("elliot", "ItemMADranking", "ItemMAD(empty_groups=nan)"),
        PeerName("elliot", "ItemMADrating", "ItemMAD(gain=rating,empty_groups=nan)"),
    ),
    citation=_DELDJOO,
)
USERMAD = MeasureDef(
    "UserMAD",
    not_per_query,
    "mean absolute difference between user groups (the dataset's segments) of the users' nDCG@k with graded gains "
    "2^(r - t + 1) - 1 (Elliot UserMADranking; gain=rating: their mean predicted score in the top k, Elliot "
    "UserMADrating). A system measure; 0 is parity.",
    _FAMILY,
    cutoff="required",
    system=SystemValue(parts=user_mad_parts, finish=user_mad_finish, bounds=(0.0, _INF), by_group=user_group_values),
    higher_is_better=False,
    needs=_user_group_needs,
    item_reads=_score_for_rating,
    params=(
        ELLIOT_REL,
        ParamInfo(
            "gain",
            "text",
            "ranking",
            "ranking: the user's graded nDCG@k; rating: its mean predicted score",
            ("ranking", "rating"),
        ),
        _USERS,
        ParamInfo(
            "empty_groups", "text", "skip", "skip: a group without users leaves the pairs; nan: NaN (Elliot)", ("skip", "nan")
        ),
    ),
    peer_names=(
        PeerName("elliot", "UserMADranking", "UserMAD(empty_groups=nan)"),
        PeerName("elliot", "UserMADrating", "UserMAD(gain=rating,empty_groups=nan)"),
    ),
    citation=_DELDJOO,
)


# Bias disparity ---------------------------------------------------------------------------------------------------------
def _bias_cell(lists: RankedLists, m: Measure) -> tuple[np.ndarray, int, int]:
    """(item group per code, the category's group index, the user group's index) of a BiasDisparity cell."""
    items = items_of(lists)
    group, category = _category_of(lists, m)
    name = str(m.param("user_group"))
    if name not in items.user_group_names:
        raise MeasureError(
            f"{m}: user group {name!r} is not in the segments", hint=f"the user groups: {', '.join(items.user_group_names)}"
        )
    return group, category, items.user_group_names.index(name)


def bias_parts(lists: RankedLists, m: Measure) -> np.ndarray:
    group, value, user_group = _bias_cell(lists, m)
    return kernels.bias_parts(lists, m.cutoff, group, value, user_group)


def bias_finish(lists: RankedLists, m: Measure, sums: np.ndarray) -> np.ndarray:
    return kernels.bias(items_of(lists), *_bias_cell(lists, m), text_of(m, "kind", "BD"), sums)


def _bias_target(m: Measure) -> float:
    """BD is best at 0 (no amplified bias), BR and BS at 1 (the category's share equals its share of the catalogue)."""
    return 0.0 if text_of(m, "kind", "BD") == "BD" else 1.0


BIASDISPARITY = MeasureDef(
    "BiasDisparity",
    not_per_query,
    "bias disparity of one (user group, item category) cell (Tsintzou et al.; Elliot BiasDisparityBR/BS/BD): BR = the "
    "category's share of the group's top-k items over its share of the catalogue, BS the same over the group's "
    "training items, BD = (BR - BS) / BS. A system measure with a target: 0 for BD (no amplified bias, signed), 1 for "
    "BR and BS (the category's share equals its share of the catalogue); closer is better.",
    _FAMILY,
    cutoff="required",
    system=SystemValue(parts=bias_parts, finish=bias_finish, bounds=(-1.0, _INF)),
    higher_is_better=False,
    target=_bias_target,
    needs=_bias_needs,
    params=(
        _GROUP,
        ParamInfo("category", "label", None, "the item category: a value (number or label) of the group column", required=True),
        ParamInfo("user_group", "text", None, "the user group: a segment name", required=True),
        ParamInfo(
            "kind",
            "text",
            "BD",
            "BD (disparity), BR (bias in the recommendations), BS (in the training data)",
            ("BD", "BR", "BS"),
        ),
    ),
    peer_names=(
        PeerName("elliot", "BiasDisparityBD", "BiasDisparity(kind=BD)"),
        PeerName("elliot", "BiasDisparityBR", "BiasDisparity(kind=BR)"),
        PeerName("elliot", "BiasDisparityBS", "BiasDisparity(kind=BS)"),
    ),
    citation="Tsintzou, Pitoura & Tsaparas, RMSE workshop at RecSys 2019",
)

MEASURES = (PSP, PSNDCG, EXPOSUREGINI, EXPOSURESHARE, RSP, REO, POPRSP, POPREO, ITEMMAD, USERMAD, BIASDISPARITY)
