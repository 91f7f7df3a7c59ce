"""The registry: every measure's definition as data.

Each entry declares its name and aliases, its parameters (type, default, meaning),
whether it takes a cutoff, how per-query values are aggregated, whether higher is
better, trec_eval's name for it, a description and a citation, and the kernel.
The CLI's choices, the "did you mean" hints and the docs derive from it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.errors import MeasureError
from harness.kernels import average_precision as ap_k
from harness.kernels import counts, dcg, fairness, incomplete, intent, interpolated, precision, reciprocal_rank, user_models
from harness.kernels._segments import RankedLists
from harness.kernels.gains import GainScheme
from harness.measures.spec import Measure, ParamValue

ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class ParamInfo:
    """One parameter: ``kind`` is number, int, text, numbers (a tuple) or gains ({level: gain})."""

    name: str
    kind: str
    default: ParamValue | None
    doc: str
    choices: tuple[str, ...] = ()
    required: bool = False


REL = ParamInfo("rel", "number", None, "relevance threshold: relevant iff label >= rel (default: the relevance_level convention)")
GAIN = ParamInfo(
    "gain",
    "text",
    "linear",
    "gain scheme: 'linear' (label), 'exp' (2^label - 1), 'binary' (1 at or above the "
    "relevance level: RecBole, Microsoft Recommenders) or 'elliot' (2^(label - level + 1) - 1 at or above it)",
    ("linear", "exp", "binary", "elliot"),
)
GAINS = ParamInfo("gains", "gains", None, "custom gain per level, e.g. {0:0,1:1,2:3}; unlisted levels keep gain = level")


@dataclass(frozen=True)
class MeasureDef:
    name: str
    kernel: Callable[[RankedLists, Measure], np.ndarray]
    description: str
    cutoff: str = "none"  # none | optional | required
    params: tuple[ParamInfo, ...] = ()
    aggregate: str = "mean"  # mean | sum | gmean | count
    higher_is_better: bool = True
    # a measure best at a value inside its range (a signed disparity at 0, a ratio at 1): closer is better, whichever
    # side; None: the direction is higher_is_better's
    target: Callable[[Measure], float | None] | None = None
    trec_name: str | None = None  # trec_eval's name without a cutoff
    trec_cut_name: str | None = None  # trec_eval's name with a cutoff (P -> P_5)
    aliases: tuple[str, ...] = ()
    validate: Callable[[Measure], None] | None = None  # checks across parameters, when the name is parsed
    ties_average_ok: bool = False  # exact under ties="average": linear in per-position values
    # the conventions its kernel reads from the lists beyond the aligned rows (ap_denominator, short_lists at a
    # cutoff; ideal_from): what harness explain and --match vary for it. The relevance level is read by every
    # measure with a `rel` parameter, and by gains that start at it (binary, elliot)
    reads_conventions: frozenset[str] = frozenset()
    integer: bool = False  # printed as a whole number (counts)
    citation: str = ""
    default_cutoffs: tuple[int, ...] = field(default=())
    # Beyond-accuracy measures (issue 11):
    system: Callable[[Measure], bool] | None = None  # one value per run (coverage, entropy, Gini): not per query
    system_kernel: Callable[[RankedLists, Measure, np.ndarray], np.ndarray] | None = None  # (lists, m, W (B x Q)) -> (B,)
    direction: Callable[[Measure], bool] | None = None  # higher is better, when a parameter decides it
    needs: Callable[[Measure], frozenset[str]] | None = None  # inputs beyond qrels and run: train, items, features
    undefined_skipped: bool = False  # NaN = undefined for that user (left out of the mean and of the paired tests)
    item_similarity: bool = False  # compares items pairwise (ILD, Serendipity): its `sim` parameter says how
    # A system measure that is a function of sums over users (REO, RSP, pyxclib's PSP): each user's terms
    # (queries x m, from that user's rows only), and the value from their weighted sums (B x m) -> (B,)
    parts: Callable[[RankedLists, Measure], Any] | None = None
    finish: Callable[[RankedLists, Measure, np.ndarray], np.ndarray] | None = None
    item_reads: Callable[[Measure], frozenset[str]] | None = None  # lists' extras: 'judged' item codes, 'score'
    intent_aware: bool = False  # reads subtopic judgments (ndeval's measures)
    reads_samples: bool = False  # reads a stochastic run's sampled rankings (expected exposure)
    # the interval every per-query value lies in, where one is known (proportions: [0, 1]); a release guard's betting
    # bound rests on it (harness.stats.bounds). Set for the measures listed in UNIT_INTERVAL below
    value_range: tuple[float, float] | None = None
    # the interval a measure with one value per run lies in (a share in [0, 1], a disparity >= 0), for the measure's
    # parameters, where one is known: its bootstrap interval is clipped to it. Set in SYSTEM_BOUNDS below
    system_bounds: Callable[[Measure], tuple[float, float]] | None = None
    # the run's value of each group behind a system measure (REO's P_g, each group's share of exposure): (the groups'
    # names, their values), from the lists and the measure's summed terms; the report draws them
    by_group: Callable[[RankedLists, Measure, np.ndarray], tuple[tuple[str, ...], np.ndarray]] | None = None

    def param_info(self, name: str) -> ParamInfo:
        for info in self.params:
            if info.name == name:
                return info
        accepted = ", ".join(p.name for p in self.params) or "none"
        raise MeasureError(f"{self.name} has no parameter {name!r}", hint=f"parameters of {self.name}: {accepted}")

    def make(self, raw: Mapping[str, object], cutoff: int | None) -> Measure:
        """Validate parameters and cutoff; keep non-default parameters only, sorted by name."""
        if cutoff is not None and self.cutoff == "none":
            raise MeasureError(f"{self.name} takes no cutoff, got @{cutoff}", hint=f"write {self.name} without @")
        if cutoff is None and self.cutoff == "required":
            raise MeasureError(f"{self.name} needs a cutoff", hint=f"write {self.name}@10")
        if cutoff is not None and cutoff < 1:
            raise MeasureError(f"cutoff of {self.name} must be at least 1, got {cutoff}", hint=f"write {self.name}@10")
        for info in self.params:
            if info.required and info.name not in raw:
                raise MeasureError(
                    f"{self.name} needs the parameter {info.name}", hint=f"write {self.name}({info.name}=...): {info.doc}"
                )
        params: list[tuple[str, ParamValue]] = []
        for key, value in raw.items():
            if key == "judged_only":  # ir_measures: any measure over the judged documents only (trec_eval -J)
                if not isinstance(value, bool):
                    raise MeasureError(
                        f"judged_only of {self.name} must be True or False, got {value!r}",
                        hint=f"write {self.name}(judged_only=True)",
                    )
                if value:
                    params.append((key, True))
                continue
            info = self.param_info(key)
            checked = _check_param(self.name, info, value)
            if checked != info.default:
                params.append((key, checked))
        measure = Measure(self.name, tuple(sorted(params)), cutoff)
        if self.validate is not None:
            self.validate(measure)
        return measure

    def compute(self, lists: RankedLists, measure: Measure) -> np.ndarray:
        return self.kernel(lists, measure)

    def bounds_of(self, measure: Measure) -> tuple[float, float] | None:
        """The interval the measure's value over users lies in: a system measure's own bounds, else its per-query
        range (a mean of values in [0, 1] is in [0, 1]); None where none is known.

        >>> from harness.measures.parse import parse_measure
        >>> REGISTRY.definition(parse_measure("REO(group=g)@10")).bounds_of(parse_measure("REO(group=g)@10"))
        (0.0, inf)
        """
        if not self.is_system(measure):
            return self.range_of(measure)
        return None if self.system_bounds is None else self.system_bounds(measure)

    def is_system(self, measure: Measure) -> bool:
        """One value per run (resampled over users for a CI), not one per query."""
        return self.system is not None and self.system(measure)

    def compute_system(self, lists: RankedLists, measure: Measure, weights: np.ndarray) -> np.ndarray:
        """The run's value under each row of user weights (B x queries): ones for the run itself."""
        if self.parts is not None:
            assert self.finish is not None
            return self.finish(lists, measure, self._summed(lists, measure, weights))
        assert self.system_kernel is not None
        return self.system_kernel(lists, measure, weights)

    def _summed(self, lists: RankedLists, measure: Measure, weights: np.ndarray) -> np.ndarray:
        """(B x m): the users' terms (as the evaluator attached them, else computed) summed under each row of weights."""
        assert self.parts is not None
        stored = None if lists.items is None or lists.items.user_parts is None else lists.items.user_parts.get(measure)
        return fairness.weighted_sums(weights, stored if stored is not None else self.parts(lists, measure))

    def group_values(self, lists: RankedLists, measure: Measure) -> tuple[tuple[str, ...], np.ndarray] | None:
        """(the groups' names, the run's value of each) behind a system measure; None when it has no groups."""
        if self.by_group is None:
            return None
        sums = self._summed(lists, measure, np.ones((1, lists.n_queries))) if self.parts is not None else np.zeros((1, 0))
        return self.by_group(lists, measure, sums)

    def reads(self, measure: Measure) -> frozenset[str]:
        """What the kernel reads of a run besides each row's item: 'judged' (the judged items' codes), 'score'."""
        return frozenset() if self.item_reads is None else self.item_reads(measure)

    def guard_aggregate(self, measure: Measure) -> str:
        """How a release guard sees the measure: ``catalogue`` (one value per run from the distinct items recommended:
        Coverage, Gini ...), ``system`` (one value per run from sums over users: REO, PSP ...) or its aggregate.

        >>> REGISTRY["Coverage"].guard_aggregate(Measure("Coverage", cutoff=10)), REGISTRY["AP"].guard_aggregate(Measure("AP"))
        ('catalogue', 'mean')
        """
        if self.is_system(measure):
            return "system" if self.parts is not None else "catalogue"
        return self.aggregate

    def range_of(self, measure: Measure) -> tuple[float, float] | None:
        """The interval every per-query value of ``measure`` lies in, or None where none is known (a custom gain
        below 0 can take a graded measure below 0).

        >>> REGISTRY["AP"].range_of(Measure("AP")), REGISTRY["NumRet"].range_of(Measure("NumRet"))
        ((0.0, 1.0), None)
        >>> REGISTRY["nDCG"].range_of(Measure("nDCG", (("gains", ((0.0, -1.0), (1.0, 1.0))),), 10)) is None
        True
        """
        if self.value_range is None or self.is_system(measure):
            return None
        gains = measure.param("gains")
        if isinstance(gains, tuple) and any(float(gain) < 0 for _, gain in gains):  # type: ignore[misc]
            return None
        return self.value_range

    def higher(self, measure: Measure) -> bool:
        """Whether a larger value is better, for this measure with its parameters (for a measure with a
        :meth:`target_of`, only on the side of the target below it)."""
        return self.higher_is_better if self.direction is None else self.direction(measure)

    def target_of(self, measure: Measure) -> float | None:
        """The value a measure is best at when that is inside its range (BiasDisparity's BD at 0, its BR and BS at
        1): a move towards it is better, from either side. None for a measure better higher or lower."""
        return None if self.target is None else self.target(measure)

    def goodness(self, measure: Measure, value: float) -> float:
        """``value`` on a scale where larger is better: the value, its negative, or minus its distance from the target.

        >>> from harness.measures.parse import parse_measure
        >>> bd = parse_measure("BiasDisparity(group=provider, category=1, user_group='new')@10")
        >>> REGISTRY.definition(bd).goodness(bd, -0.108) < REGISTRY.definition(bd).goodness(bd, 0.002)
        True
        """
        target = self.target_of(measure)
        if target is not None:
            return -abs(value - target)
        return value if self.higher(measure) else -value

    @property
    def beyond_accuracy(self) -> bool:
        """It reads the items of the lists (coverage, diversity, novelty, popularity), not only their labels."""
        return self.needs is not None or self.system is not None

    def inputs(self, measure: Measure) -> frozenset[str]:
        """What the measure reads besides qrels and run: 'train', 'items' (catalogue), 'features'."""
        return frozenset() if self.needs is None else frozenset(n for n in self.needs(measure) if not n.startswith("column:"))

    def catalogue_columns(self, measure: Measure) -> frozenset[str]:
        """The catalogue columns the measure groups items by (REO, RSP, ItemMAD's ``group``)."""
        needs = frozenset() if self.needs is None else self.needs(measure)
        return frozenset(n.removeprefix("column:") for n in needs if n.startswith("column:"))

    def uses_cooccurrence(self, measure: Measure) -> bool:
        """It compares items by the cosine of their training users (the compiled co-occurrence kernels)."""
        return self.item_similarity and str(measure.param("sim", "cooccurrence")) == "cooccurrence"


def _check_param(measure: str, info: ParamInfo, value: object) -> ParamValue:
    where = f"parameter {info.name} of {measure}"
    if info.kind in ("number", "int"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise MeasureError(f"{where} must be a number, got {value!r}", hint=f"{info.name}: {info.doc}")
        if info.kind == "int" and not float(value).is_integer():
            raise MeasureError(f"{where} must be a whole number, got {value!r}", hint=f"{info.name}: {info.doc}")
        return int(value) if info.kind == "int" else float(value)
    if info.kind == "label":  # a value of a catalogue column: a number, or a text label
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise MeasureError(f"{where} must be a number or a label, got {value!r}", hint=f"{info.name}: {info.doc}")
        return value if isinstance(value, str) else float(value)
    if info.kind == "text":
        if not isinstance(value, str) or (info.choices and value not in info.choices):
            raise MeasureError(f"{where} must be one of {', '.join(info.choices)}, got {value!r}", hint=info.doc)
        return value
    if info.kind == "numbers":
        items = value if isinstance(value, (tuple, list)) else (value,)
        if not items or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in items):
            raise MeasureError(f"{where} must be numbers, got {value!r}", hint=info.doc)
        return tuple(float(v) for v in items)
    if info.kind == "gains":
        if not isinstance(value, dict) or not value:
            raise MeasureError(f"{where} must be a {{level: gain}} table, got {value!r}", hint=info.doc)
        pairs = []
        for level, gain in value.items():
            if (
                isinstance(level, bool)
                or not isinstance(level, (int, float))
                or isinstance(gain, bool)
                or not isinstance(gain, (int, float))
            ):
                raise MeasureError(f"{where} must map numbers to numbers, got {level!r}: {gain!r}", hint=info.doc)
            pairs.append((float(level), float(gain)))
        return tuple(sorted(pairs))
    raise AssertionError(f"unknown parameter kind {info.kind}")  # a registry bug, not user input


def gain_scheme(measure: Measure, lists: RankedLists) -> GainScheme:
    """The measure's gains; ``binary`` and ``elliot`` start at its ``rel`` (default: the lists' relevance level)."""
    table = measure.param("gains")
    if table is not None:
        return GainScheme.custom(dict(table))  # type: ignore[arg-type]
    kind = measure.param("gain")
    if kind in ("binary", "elliot"):
        rel = _rel(measure)
        level = lists.relevance_level if rel is None else rel
        return GainScheme.binary(level) if kind == "binary" else GainScheme.elliot(level)
    # ranx drops the judgments below its relevance level: linear and exponential gains start there too
    floor = lists.relevance_level if lists.graded_below_level_zero else 0.0
    return GainScheme.exponential(floor) if kind == "exp" else GainScheme.linear(floor)


def _rel(m: Measure) -> float | None:
    value = m.param("rel")
    return None if value is None else float(value)  # type: ignore[arg-type]


def _num(m: Measure, key: str, default: float) -> float:
    return float(m.param(key, default))  # type: ignore[arg-type]


class Registry:
    """Name (and alias) -> definition; registering a name twice is a bug and fails."""

    def __init__(self) -> None:
        self._defs: dict[str, MeasureDef] = {}
        self._lookup: dict[str, MeasureDef] = {}

    def register(self, definition: MeasureDef) -> MeasureDef:
        for name in (definition.name, *definition.aliases):
            if name.lower() in self._lookup:
                raise ValueError(f"measure name {name!r} registered twice")
            self._lookup[name.lower()] = definition
        self._defs[definition.name] = definition
        return definition

    def replace(self, name: str, **changes: Any) -> MeasureDef:
        """Change facts of a registered definition (while the registry is built), under all its names."""
        old = self._defs[name]
        new = self._defs[name] = dataclasses.replace(old, **changes)
        self._lookup.update({key: new for key, found in self._lookup.items() if found is old})
        return new

    def get(self, name: str) -> MeasureDef | None:
        return self._lookup.get(name.lower())

    def __getitem__(self, name: str) -> MeasureDef:
        return self._defs[name]

    def __iter__(self) -> Iterator[MeasureDef]:
        return iter(self._defs.values())

    def all_names(self) -> list[str]:
        return [n for d in self._defs.values() for n in (d.name, *d.aliases)]

    def definition(self, measure: Measure) -> MeasureDef:
        return self._defs[measure.name]

    def reads_samples(self, measures: Iterable[Measure]) -> bool:
        """Whether any of ``measures`` reads a stochastic run's sampled rankings (then runs are read with samples)."""
        return any(self.definition(m).reads_samples for m in measures)


REGISTRY = Registry()
_r = REGISTRY.register
_MAP_DENOM = ParamInfo(
    "denominator",
    "text",
    None,
    "AP@k divides by 'R' (trec_eval) or 'min_R_k' (MS Recommenders); default: the ap_denominator convention",
    ("R", "min_R_k"),
)


def _min_r_k(lists: RankedLists, m: Measure) -> bool:
    chosen = m.param("denominator")
    return lists.ap_min_r_k if chosen is None else chosen == "min_R_k"


# Counts -----------------------------------------------------------------------
_r(
    MeasureDef(
        "NumQ",
        lambda L, m: np.ones(L.n_queries),
        "Number of queries evaluated.",
        aggregate="count",
        trec_name="num_q",
        integer=True,
        ties_average_ok=True,
    )
)
_r(
    MeasureDef(
        "NumRet",
        lambda L, m: counts.num_ret(L),
        "Documents retrieved.",
        aggregate="sum",
        trec_name="num_ret",
        integer=True,
        ties_average_ok=True,
    )
)
_r(
    MeasureDef(
        "NumRel",
        lambda L, m: counts.num_rel(L, _rel(m)),
        "Relevant judged documents, retrieved or not.",
        params=(REL,),
        aggregate="sum",
        trec_name="num_rel",
        integer=True,
        ties_average_ok=True,
    )
)
_r(
    MeasureDef(
        "NumRelRet",
        lambda L, m: counts.num_rel_ret(L, _rel(m)),
        "Relevant documents retrieved.",
        params=(REL,),
        aggregate="sum",
        trec_name="num_rel_ret",
        integer=True,
        ties_average_ok=True,
    )
)
_r(
    MeasureDef(
        "NumNonRelJudgedRet",
        lambda L, m: counts.num_nonrel_judged_ret(L, _rel(m)),
        "Retrieved documents judged non-relevant.",
        params=(REL,),
        aggregate="sum",
        trec_name="num_nonrel_judged_ret",
        integer=True,
        ties_average_ok=True,
    )
)

# Precision and recall -------------------------------------------------------------
_r(
    MeasureDef(
        "AP",
        lambda L, m: ap_k.average_precision(L, m.cutoff, _rel(m), _min_r_k(L, m)),
        "Average precision: mean of P@i over the ranks i of relevant documents, over R (map, map_cut.k).",
        reads_conventions=frozenset({"ap_denominator"}),
        cutoff="optional",
        params=(REL, _MAP_DENOM),
        trec_name="map",
        trec_cut_name="map_cut",
        aliases=("MAP",),
        default_cutoffs=(5, 10, 15, 20, 30, 100, 200, 500, 1000),
        citation="Harman, TREC-1 (1992)",
    )
)
_r(
    MeasureDef(
        "GMAP",
        lambda L, m: ap_k.average_precision(L, None, _rel(m)),
        "Geometric mean of AP over queries (values floored at 1e-5).",
        params=(REL,),
        aggregate="gmean",
        trec_name="gm_map",
        citation="Robertson, SIGIR 2006",
    )
)
_r(
    MeasureDef(
        "P",
        lambda L, m: precision.precision_at(L, m.cutoff, _rel(m)),
        "Precision at k: relevant in the top k over k (short lists padded with non-relevant).",
        reads_conventions=frozenset({"short_lists"}),
        cutoff="required",
        params=(REL,),
        trec_cut_name="P",
        aliases=("Precision",),
        ties_average_ok=True,
        default_cutoffs=(5, 10, 15, 20, 30, 100, 200, 500, 1000),
    )
)
_r(
    MeasureDef(
        "R",
        lambda L, m: precision.recall_at(L, m.cutoff, _rel(m)),
        "Recall at k: relevant in the top k over R.",
        cutoff="required",
        params=(REL,),
        trec_cut_name="recall",
        aliases=("Recall",),
        ties_average_ok=True,
        default_cutoffs=(5, 10, 15, 20, 30, 100, 200, 500, 1000),
    )
)
_r(
    MeasureDef(
        "RelP",
        lambda L, m: precision.relative_precision_at(L, m.cutoff, _rel(m)),
        "Relative precision at k: relevant in the top k over min(k, R).",
        cutoff="required",
        params=(REL,),
        trec_cut_name="relative_P",
        ties_average_ok=True,
        default_cutoffs=(5, 10, 15, 20, 30, 100, 200, 500, 1000),
    )
)
_r(
    MeasureDef(
        "Success",
        lambda L, m: precision.success_at(L, m.cutoff, _rel(m)),
        "1 if a relevant document is in the top k, else 0.",
        cutoff="optional",
        params=(REL,),
        trec_cut_name="success",
        aliases=("Hit", "HitRate"),
        default_cutoffs=(1, 5, 10),
    )
)
_r(
    MeasureDef(
        "F",
        lambda L, m: precision.f_at(L, m.cutoff, _rel(m), _num(m, "beta", 1.0)),
        "F-beta of P@k and R@k.",
        reads_conventions=frozenset({"short_lists"}),
        cutoff="required",
        params=(REL, ParamInfo("beta", "number", 1.0, "weight of recall against precision")),
        aliases=("F1",),
    )
)
_r(MeasureDef("Rprec", lambda L, m: precision.r_precision(L, _rel(m)), "Precision at rank R.", params=(REL,), trec_name="Rprec"))
_r(
    MeasureDef(
        "RprecMult",
        lambda L, m: precision.r_precision_mult(L, _num(m, "mult", 1.0), _rel(m)),
        "Precision at mult x R documents.",
        params=(REL, ParamInfo("mult", "number", 1.0, "multiple of R")),
        trec_name="Rprec_mult",
    )
)
_r(
    MeasureDef(
        "SetP",
        lambda L, m: precision.precision_at(L, None, _rel(m)),
        "Relevant retrieved over retrieved.",
        params=(REL,),
        trec_name="set_P",
        ties_average_ok=True,
    )
)
_r(
    MeasureDef(
        "SetR",
        lambda L, m: precision.recall_at(L, None, _rel(m)),
        "Relevant retrieved over R.",
        params=(REL,),
        trec_name="set_recall",
        ties_average_ok=True,
    )
)
_r(
    MeasureDef(
        "SetRelP",
        lambda L, m: precision.relative_precision_at(L, None, _rel(m)),
        "Relevant retrieved over min(retrieved, R).",
        params=(REL,),
        trec_name="set_relative_P",
        ties_average_ok=True,
    )
)
_r(
    MeasureDef(
        "SetAP",
        lambda L, m: precision.set_average_precision(L, _rel(m)),
        "set_P x set_recall.",
        params=(REL,),
        trec_name="set_map",
        ties_average_ok=True,
    )
)
_r(
    MeasureDef(
        "SetF",
        lambda L, m: precision.f_at(L, None, _rel(m), _num(m, "beta", 1.0)),
        "F-beta of set_P and set_recall.",
        params=(REL, ParamInfo("beta", "number", 1.0, "weight of recall")),
        trec_name="set_F",
        ties_average_ok=True,
    )
)
_r(
    MeasureDef(
        "Utility",
        lambda L, m: precision.utility(L, _num(m, "a", 1.0), _num(m, "b", -1.0), _num(m, "c", 0.0), _num(m, "d", 0.0), _rel(m)),
        "a*rel_ret + b*nonrel_ret + c*rel_not_ret + d*nonrel_not_ret.",
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
)

# Rank-sensitive binary measures -----------------------------------------------------
_r(
    MeasureDef(
        "RR",
        lambda L, m: reciprocal_rank.reciprocal_rank(L, m.cutoff, _rel(m)),
        "Reciprocal rank of the first relevant document (within k).",
        cutoff="optional",
        params=(REL,),
        trec_name="recip_rank",
        aliases=("MRR", "RecipRank"),
    )
)
_r(
    MeasureDef(
        "Bpref",
        lambda L, m: incomplete.bpref(L, _rel(m)),
        "Binary preference: judged documents only.",
        params=(REL,),
        trec_name="bpref",
        citation="Buckley and Voorhees, SIGIR 2004",
    )
)
_r(
    MeasureDef(
        "GMBpref",
        lambda L, m: incomplete.bpref(L, _rel(m)),
        "Geometric mean of bpref over queries.",
        params=(REL,),
        aggregate="gmean",
        trec_name="gm_bpref",
    )
)
_r(
    MeasureDef(
        "infAP",
        lambda L, m: incomplete.inferred_ap(L, _rel(m)),
        "Inferred AP for sampled judgments.",
        params=(REL,),
        trec_name="infAP",
        citation="Yilmaz and Aslam, CIKM 2006",
    )
)
_r(
    MeasureDef(
        "IPrec",
        lambda L, m: interpolated.iprec_at_recall(L, (_num(m, "recall", 0.0),), _rel(m))[:, 0],
        "Interpolated precision at a recall level.",
        params=(REL, ParamInfo("recall", "number", None, "recall level in [0, 1]", required=True)),
        trec_name="iprec_at_recall",
        reads_conventions=frozenset({"iprec_cut"}),
    )
)
_r(
    MeasureDef(
        "IPrecAvg",
        lambda L, m: interpolated.average_interpolated_precision(L, m.param("recalls", ELEVEN_POINTS), _rel(m)),  # type: ignore[arg-type]
        "Interpolated precision averaged over recall levels (11-point average).",
        params=(REL, ParamInfo("recalls", "numbers", ELEVEN_POINTS, "recall levels")),
        trec_name="11pt_avg",
        aliases=("11pt_avg",),
        reads_conventions=frozenset({"iprec_cut"}),
    )
)
_r(
    MeasureDef(
        "binG", lambda L, m: user_models.bin_g(L, _rel(m)), "Binary G (trec_eval, experimental).", params=(REL,), trec_name="binG"
    )
)

# Graded measures --------------------------------------------------------------------
_r(
    MeasureDef(
        "CG",
        lambda L, m: dcg.cumulative_gain(L, m.cutoff, gain_scheme(m, L)),
        "Cumulative gain of the top k.",
        cutoff="optional",
        params=(GAIN, GAINS),
        ties_average_ok=True,
    )
)
_r(
    MeasureDef(
        "DCG",
        lambda L, m: dcg.dcg(L, m.cutoff, gain_scheme(m, L)),
        "Discounted cumulative gain, 1/log2(rank+1).",
        cutoff="optional",
        params=(GAIN, GAINS),
        trec_name="dcg",
        ties_average_ok=True,
        citation="Järvelin and Kekäläinen, TOIS 2002",
    )
)
_r(
    MeasureDef(
        "IDCG",
        lambda L, m: dcg.ideal_dcg(L, m.cutoff, gain_scheme(m, L)),
        "DCG of the ideal ranking of the judgments.",
        reads_conventions=frozenset({"ideal_from", "short_lists"}),
        cutoff="optional",
        params=(GAIN, GAINS),
        trec_name="ideal_dcg",
        ties_average_ok=True,
    )
)
_r(
    MeasureDef(
        "nDCG",
        lambda L, m: dcg.ndcg(L, m.cutoff, gain_scheme(m, L)),
        "DCG over the ideal DCG (ndcg, ndcg_cut.k).",
        reads_conventions=frozenset({"ideal_from", "short_lists"}),
        cutoff="optional",
        params=(GAIN, GAINS),
        trec_name="ndcg",
        trec_cut_name="ndcg_cut",
        ties_average_ok=True,
        default_cutoffs=(5, 10, 15, 20, 30, 100, 200, 500, 1000),
        citation="Järvelin and Kekäläinen, TOIS 2002",
    )
)
_r(
    MeasureDef(
        "nDCGRel",
        lambda L, m: dcg.ndcg_rel(L, gain_scheme(m, L)),
        "nDCG averaged over the relevant documents.",
        reads_conventions=frozenset({"ideal_from"}),
        params=(GAIN, GAINS),
        trec_name="ndcg_rel",
    )
)
_r(
    MeasureDef(
        "RnDCG",
        lambda L, m: dcg.r_ndcg(L, gain_scheme(m, L), _rel(m)),
        "nDCG averaged at the R-levels.",
        reads_conventions=frozenset({"ideal_from"}),
        params=(REL, GAIN, GAINS),
        trec_name="Rndcg",
    )
)
_r(
    MeasureDef(
        "G",
        lambda L, m: user_models.g_measure(L, gain_scheme(m, L)),
        "Normalized gain G (trec_eval, experimental).",
        reads_conventions=frozenset({"ideal_from"}),
        params=(GAIN, GAINS),
        trec_name="G",
    )
)
_r(
    MeasureDef(
        "RBP",
        lambda L, m: user_models.rbp(L, _num(m, "p", 0.9), gain_scheme(m, L)),
        "Rank-biased precision with persistence p.",
        params=(ParamInfo("p", "number", 0.9, "persistence"), GAIN, GAINS),
        trec_name="rbp",
        citation="Moffat and Zobel, TOIS 2008",
    )
)
_r(
    MeasureDef(
        "RBPResid",
        lambda L, m: user_models.rbp_residual(L),
        "RBP residual from unjudged documents (p = 0.9).",
        higher_is_better=False,
        trec_name="rbp_resid",
    )
)
_r(
    MeasureDef(
        "ERR",
        lambda L, m: user_models.expected_reciprocal_rank(L, m.cutoff, _num(m, "max_rel", 4.0)),
        "Expected reciprocal rank.",
        cutoff="optional",
        params=(ParamInfo("max_rel", "number", 4.0, "highest grade"),),
        citation="Chapelle, Metzler, Zhang and Grinspan, CIKM 2009",
    )
)

# Judgment coverage -------------------------------------------------------------------
_r(
    MeasureDef(
        "Judged",
        lambda L, m: counts.judged_at(L, m.cutoff),
        "Fraction of the top min(k, n) that is judged.",
        cutoff="optional",
        ties_average_ok=True,
    )
)
_r(
    MeasureDef(
        "Unj",
        lambda L, m: counts.unjudged_at(L, m.cutoff or 0),
        "Unjudged documents in the top k over k.",  # type: ignore[arg-type]
        cutoff="required",
        higher_is_better=False,
        trec_cut_name="unj",
        ties_average_ok=True,
        default_cutoffs=(5, 10, 20),
    )
)


# Beyond accuracy (issue 11) -----------------------------------------------------------
from harness.kernels import beyond  # noqa: E402  (grouped with its entries)

_CATALOG = ParamInfo(
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
_EL_REL = ParamInfo("rel", "number", None, "relevant iff test label >= rel (default: the relevance_level convention)")


def _k(m: Measure) -> int | None:
    return m.cutoff


def _text(m: Measure, key: str, default: str) -> str:
    return str(m.param(key, default))


def _universe_needs(m: Measure, default: str = "train") -> frozenset[str]:
    return {"train": frozenset({"train"}), "items": frozenset({"items"}), "recbole": frozenset()}[_text(m, "catalog", default)]


def _sim_needs(m: Measure) -> frozenset[str]:
    return frozenset({"train", "items", "features"}) if _text(m, "sim", "cooccurrence") == "features" else frozenset({"train"})


def _train(m: Measure) -> frozenset[str]:
    return frozenset({"train"})


def _always(m: Measure) -> bool:
    return True


def _outside(L: RankedLists, m: Measure, shown: np.ndarray, default: str = "train") -> np.ndarray:
    """Per row of weights, the items shown there (``shown``: (B, items) counts or exposures) outside the measure's
    universe: they join it (Gini counts them). Each row counts its own, so a value depends only on the lists it
    weighs: a system's Gini is the same alone, in a bootstrap resample's terms and beside any other system."""
    items = L.items
    assert items is not None
    member = {"train": items.in_train, "items": items.in_catalog}.get(_text(m, "catalog", default))
    if member is None:
        return np.zeros(shown.shape[0], dtype=np.int64)
    return ((shown > 0) & ~member).sum(axis=1)


def _coverage(L: RankedLists, m: Measure, W: np.ndarray) -> np.ndarray:
    """Distinct recommended items over the universe's. Over the training items (msrec) a recommended item outside
    them counts, so coverage can pass 1; over the catalogue only its items count (RecBole recommends nothing else):
    at most 1, and the diagnostics count the recommendations outside it."""
    assert L.items is not None
    catalog = _text(m, "catalog", "train")
    counts = beyond.coverage_counts(L, m.cutoff, W)
    if catalog == "items":
        counts = np.where(L.items.in_catalog[None, :], counts, 0.0)
    return beyond.coverage(counts, beyond.universe_size(L.items, catalog))


def _gini(L: RankedLists, m: Measure, W: np.ndarray) -> np.ndarray:
    assert L.items is not None
    counts = beyond.coverage_counts(L, m.cutoff, W)
    size = beyond.universe_size(L.items, _text(m, "catalog", "train")) + _outside(L, m, counts)
    return beyond.gini(counts, size, _text(m, "form", "recbole"))


def _entropy(L: RankedLists, m: Measure, W: np.ndarray) -> np.ndarray:
    counts = beyond.coverage_counts(L, m.cutoff, W)
    form = _text(m, "form", "msrec")
    if form != "elliot":
        return beyond.entropy(counts, form)
    length = np.minimum(L.n_ret, m.cutoff) if m.cutoff else L.n_ret
    share = beyond.coverage_counts(L, m.cutoff, W * np.where(length > 0, 1.0 / np.maximum(length, 1), 0.0))
    return beyond.entropy(counts, form, share, (W * (length > 0)).sum(axis=1))


def _system_novelty(L: RankedLists, m: Measure, W: np.ndarray) -> np.ndarray:
    assert L.items is not None
    info, counted = beyond.self_information(L.items, _text(m, "cold", "max"))
    per_user, kept = (beyond.top_sums(L, m.cutoff, np.where(counted, v, 0.0)) for v in (info, np.ones(info.size)))
    return np.asarray((W @ per_user) / (W @ kept))


def _novelty_is_system(m: Measure) -> bool:
    return m.param("weight") == "recommendation"


def _one_tail_rule(m: Measure) -> None:
    if m.param("tail") is not None and m.param("tail_count") is not None:
        raise MeasureError(f"{m} sets both tail and tail_count", hint="give one: a share of the items, or a count threshold")
    if not 0 < _num(m, "tail", 0.1) <= 1:
        raise MeasureError(f"tail of {m} must lie in (0, 1], got {m.param('tail')}", hint="or use tail_count for a threshold")


def _need_tail(L: RankedLists, m: Measure) -> np.ndarray:
    assert L.items is not None
    if m.param("tail_count") is not None:
        return beyond.recbole_tail(L.items, None, _num(m, "tail_count", 0))
    return beyond.recbole_tail(L.items, _num(m, "tail", 0.1), None, _text(m, "ties", "id"))


def _long_tail(L: RankedLists, m: Measure) -> np.ndarray:
    assert L.items is not None
    return beyond.elliot_long_tail(L.items, _num(m, "head", 0.8))


def _not_per_query(L: RankedLists, m: Measure) -> np.ndarray:
    raise AssertionError(f"{m} is a system measure: use compute_system")  # a caller bug


_BEYOND = "beyond accuracy: "
_r(
    MeasureDef(
        "Coverage",
        _not_per_query,
        _BEYOND + "catalogue coverage: distinct recommended items / items of the universe: the training items by "
        "default (msrec catalog_coverage; recommended items outside them count, as in msrec, so it can pass 1), "
        "catalog=items the catalogue's (its items only: at most 1; RecBole ItemCoverage), catalog=recbole RecBole's "
        "num_items. A system measure.",
        cutoff="optional",
        params=(_CATALOG,),
        system=_always,
        system_kernel=_coverage,
        needs=_universe_needs,
        citation="Ge et al., RecSys 2010",
    )
)
_r(
    MeasureDef(
        "RecItems",
        _not_per_query,
        _BEYOND + "number of distinct recommended items (Elliot ItemCoverage). A system measure.",
        cutoff="optional",
        system=_always,
        integer=True,
        system_kernel=lambda L, m, W: (beyond.coverage_counts(L, m.cutoff, W) > 0).sum(axis=1).astype(np.float64),
    )
)
_r(
    MeasureDef(
        "Entropy",
        _not_per_query,
        _BEYOND + "Shannon entropy of the recommendation shares p_i = r_i / N. form=msrec: -sum p log2 p in bits "
        "(msrec distributional_coverage); form=recbole: the mean of -p ln p over the distinct recommended items "
        "(RecBole ShannonEntropy's code); form=elliot: each list weighs 1 (Elliot SEntropy). A system measure.",
        cutoff="optional",
        system=_always,
        system_kernel=_entropy,
        params=(
            ParamInfo(
                "form",
                "text",
                "msrec",
                "msrec (bits, summed), recbole (ln, mean), elliot (log2, lists weigh 1)",
                ("msrec", "recbole", "elliot"),
            ),
        ),
        citation="Shani & Gunawardana, Evaluating Recommendation Systems, 2011",
    )
)
_r(
    MeasureDef(
        "Gini",
        _not_per_query,
        _BEYOND + "Gini index of the recommendation counts over the item universe (items never recommended count 0). "
        "form=recbole: 0 when equal, lower is better (RecBole GiniIndex); form=elliot: 1 - Gini x n/(n-1), "
        "1 when equal, higher is better (Elliot Gini). A system measure.",
        cutoff="optional",
        system=_always,
        system_kernel=_gini,
        needs=_universe_needs,
        higher_is_better=False,
        direction=lambda m: _text(m, "form", "recbole") == "elliot",
        params=(
            _CATALOG,
            ParamInfo("form", "text", "recbole", "recbole (inequality, n) or elliot (1 - Gini, n - 1)", ("recbole", "elliot")),
        ),
    )
)
_r(
    MeasureDef(
        "Novelty",
        lambda L, m: beyond.novelty(L, m.cutoff, _text(m, "cold", "max")),
        _BEYOND + "mean self-information -log2(c_i / T) of the recommended items, c_i the item's training rows "
        "(msrec novelty on one user's list). weight=recommendation: the run's value with every recommendation "
        "weighing the same (msrec novelty): a system measure.",
        cutoff="optional",
        needs=_train,
        undefined_skipped=True,
        system=_novelty_is_system,
        system_kernel=_system_novelty,
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
        citation="Castells, Vargas & Wang, ECIR 2011",
    )
)
_r(
    MeasureDef(
        "ILD",
        lambda L, m: beyond.ild(L, m.cutoff, _text(m, "sim", "cooccurrence")),
        _BEYOND + "intra-list diversity: 1 - mean similarity over the unordered pairs of the list (msrec user_diversity; "
        "unseen pairs count 0). Undefined below 2 items (left out, as msrec does).",
        cutoff="optional",
        params=(_SIM,),
        needs=_sim_needs,
        undefined_skipped=True,
        item_similarity=True,
        citation="Ziegler et al., WWW 2005",
    )
)
_r(
    MeasureDef(
        "Serendipity",
        lambda L, m: beyond.serendipity(L, m.cutoff, _text(m, "sim", "cooccurrence"), _rel(m)),
        _BEYOND + "mean over the list of (1 - mean similarity to the user's training items) x relevance (msrec "
        "user_serendipity; rel unset: every item counts as relevant). Undefined without training history.",
        cutoff="optional",
        params=(_SIM, _SER_REL),
        needs=_sim_needs,
        undefined_skipped=True,
        item_similarity=True,
        citation="Zhang et al., Auralist, WSDM 2012",
    )
)
_r(
    MeasureDef(
        "ARP",
        lambda L, m: beyond.arp(L, m.cutoff, _text(m, "pop", "rows")),
        _BEYOND + "average recommendation popularity of the list: training rows (RecBole AveragePopularity) or "
        "distinct users with pop=users (Elliot ARP); items absent from training count 0. Lower is less popularity bias.",
        cutoff="optional",
        params=(_POP,),
        needs=_train,
        undefined_skipped=True,
        higher_is_better=False,
        citation="Abdollahpouri et al., FLAIRS 2019",
    )
)
_r(
    MeasureDef(
        "TailShare",
        lambda L, m: beyond.tail_share(L, m.cutoff, _need_tail(L, m)),
        _BEYOND + "share of the list in RecBole's tail: the max(int(n x tail), 1) training items with the fewest "
        "training rows (ties by item id), or with tail_count=t the items with at most t rows (RecBole TailPercentage).",
        cutoff="optional",
        needs=_train,
        undefined_skipped=True,
        validate=_one_tail_rule,
        params=(
            ParamInfo("tail", "number", None, "share of the training items in the tail (default 0.1)"),
            ParamInfo("tail_count", "number", None, "instead: items with at most this many training rows"),
            ParamInfo(
                "ties",
                "text",
                "id",
                "equal training counts at the share's cut: by item id, or by first "
                "appearance in the training file (recbole, RecBole's internal ids)",
                ("id", "recbole"),
            ),
        ),
    )
)
_HEAD = ParamInfo("head", "number", 0.8, "the short head holds this share of the training interactions")
_r(
    MeasureDef(
        "APLT",
        lambda L, m: beyond.tail_share(L, m.cutoff, _long_tail(L, m)),
        _BEYOND + "average percentage of long-tail items (Elliot APLT): the share of the list outside the short head, "
        "the most popular items holding 80% of the training interactions.",
        cutoff="optional",
        params=(_HEAD,),
        needs=_train,
        undefined_skipped=True,
        citation="Abdollahpouri et al., RecSys 2017",
    )
)
_r(
    MeasureDef(
        "ACLT",
        lambda L, m: beyond.tail_count(L, m.cutoff, _long_tail(L, m)),
        _BEYOND + "average coverage of long-tail items (Elliot ACLT): the number of long-tail items in the list.",
        cutoff="optional",
        params=(_HEAD,),
        needs=_train,
        undefined_skipped=True,
        citation="Abdollahpouri et al., FLAIRS 2019",
    )
)
_r(
    MeasureDef(
        "EFD",
        lambda L, m: beyond.efd(L, m.cutoff, _rel(m)),
        _BEYOND + "expected free discovery (Elliot EFD): rank-discounted (1/log2(r+1)), relevance-weighted "
        "-log2(pop_i / sum pop), over the sum of the list's discounts. Undefined without a relevant test item.",
        cutoff="optional",
        params=(_EL_REL,),
        needs=_train,
        undefined_skipped=True,
        citation="Vargas & Castells, RecSys 2011",
    )
)
_r(
    MeasureDef(
        "EPC",
        lambda L, m: beyond.epc(L, m.cutoff, _rel(m)),
        _BEYOND + "expected popularity complement (Elliot EPC): as EFD with 1 - pop_i / training users.",
        cutoff="optional",
        params=(_EL_REL,),
        needs=_train,
        undefined_skipped=True,
        citation="Vargas & Castells, RecSys 2011",
    )
)


# Fairness, exposure and propensity (issue 26) --------------------------------------------
_FAIR = "fairness: "
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


def _pyxclib(m: Measure) -> bool:
    return m.param("norm") == "pyxclib"


def _judged(m: Measure) -> frozenset[str]:
    return frozenset({"judged"})


def _group_needs(m: Measure) -> frozenset[str]:
    return frozenset({"train", "items", f"column:{m.param('group')}"})


def _ps_args(m: Measure) -> tuple[int, float | None, float, float]:
    assert m.cutoff is not None
    return m.cutoff, _rel(m), _num(m, "A", 0.55), _num(m, "B", 1.5)


def _ratio(L: RankedLists, m: Measure, sums: np.ndarray) -> np.ndarray:
    return fairness.ratio_finish(sums)


def _propensity(name: str, parts: Callable[..., np.ndarray], description: str) -> MeasureDef:
    """PSP and PSnDCG: per user the first of their two terms; with norm=pyxclib the ratio of their sums."""
    return MeasureDef(
        name,
        lambda L, m: parts(L, *_ps_args(m))[:, 0],
        "propensity: " + description,
        cutoff="required",
        params=(REL, _A, _B, _PS_NORM),
        needs=_train,
        item_reads=_judged,
        system=_pyxclib,
        parts=lambda L, m: parts(L, *_ps_args(m)),
        finish=_ratio,
        citation="Jain, Prabhu & Varma, KDD 2016",
    )


_r(
    _propensity(
        "PSP",
        fairness.psp_parts,
        "propensity-scored precision (Jain et al.): the relevant items' inverse propensities 1 + C (n_i + B)^-A in the "
        "top k, over k; n_i the item's training users, C = (ln N - 1)(B + 1)^A. norm=pyxclib: over the same for the "
        "ideal list, a ratio of means over users (pyxclib psprecision).",
    )
)
_r(
    _propensity(
        "PSnDCG",
        fairness.psndcg_parts,
        "propensity-scored nDCG (Jain et al.): the DCG of the relevant items' inverse propensities over the binary "
        "ideal DCG of min(R, k) items. norm=pyxclib: over the same for the propensity-ideal list, a ratio of means "
        "over users (pyxclib psndcg).",
    )
)


def _exposure_gini(L: RankedLists, m: Measure, W: np.ndarray) -> np.ndarray:
    assert L.items is not None
    exposures = fairness.exposure(L, m.cutoff, _text(m, "weight", "geometric"), _num(m, "patience", 0.85), W)
    size = beyond.universe_size(L.items, _text(m, "catalog", "items")) + _outside(L, m, exposures, "items")
    return np.maximum(beyond.gini(exposures, size, "recbole"), 0.0)


_r(
    MeasureDef(
        "ExposureGini",
        _not_per_query,
        _FAIR + "Gini index of the items' exposure summed over the lists (LensKit ExposureGini), over the catalogue "
        "(items never shown count 0): weight=geometric patience^(rank-1), log 1/log2(max(rank, 2)), uniform 1 "
        "(LensKit ListGini). 0 when exposure is equal. A system measure.",
        cutoff="optional",
        system=_always,
        system_kernel=_exposure_gini,
        higher_is_better=False,
        needs=lambda m: _universe_needs(m, "items"),
        params=(
            ParamInfo("catalog", "text", "items", _CATALOG.doc, _CATALOG.choices),
            ParamInfo(
                "weight", "text", "geometric", "exposure of a rank: geometric, log or uniform", ("geometric", "log", "uniform")
            ),
            ParamInfo("patience", "number", 0.85, "the geometric weight's patience"),
        ),
        citation="Diaz et al., CIKM 2020; LensKit",
    )
)


def _category_of(L: RankedLists, m: Measure) -> tuple[np.ndarray, int]:
    """(item group per code, the group index of the measure's ``category``): a value of its ``group`` column, a label
    of a text column (its column holds each item's index into the sorted labels)."""
    assert L.items is not None
    column, category = str(m.param("group")), m.param("category")
    values = L.items.columns[column]
    distinct = np.unique(values[~np.isnan(values)])
    labels = (L.items.labels or {}).get(column)
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
    group, _ = fairness.item_groups(L.items, column)
    return group, int(np.searchsorted(distinct, value))


def _share_parts(L: RankedLists, m: Measure) -> np.ndarray:
    return fairness.exposure_share_parts(
        L, m.cutoff, *_category_of(L, m), _text(m, "weight", "geometric"), _num(m, "patience", 0.85)
    )


_r(
    MeasureDef(
        "ExposureShare",
        _not_per_query,
        _FAIR + "the share of the exposure the lists give to one item group (a value of a catalogue column): its items' "
        "exposure summed over the top k of every list, over all the exposure (weight=geometric patience^(rank-1), log, "
        "uniform: the share of recommendations). A system measure.",
        cutoff="required",
        system=_always,
        needs=lambda m: frozenset({"items", f"column:{m.param('group')}"}),
        params=(
            _GROUP,
            ParamInfo("category", "label", None, "the group: a value (number or label) of the group column", required=True),
            ParamInfo(
                "weight", "text", "geometric", "exposure of a rank: geometric, log or uniform", ("geometric", "log", "uniform")
            ),
            ParamInfo("patience", "number", 0.85, "the geometric weight's patience"),
        ),
        by_group=lambda L, m, sums: (
            _group_names(L, m),
            fairness.group_exposure_shares(
                L, m.cutoff, *_groups_of(L, m), _text(m, "weight", "geometric"), _num(m, "patience", 0.85)
            ),
        ),
        parts=_share_parts,
        finish=_ratio,
        citation="Singh & Joachims, KDD 2018",
    )
)


def _groups_of(L: RankedLists, m: Measure) -> tuple[np.ndarray, int]:
    assert L.items is not None
    if m.param("group") is None:  # PopREO, PopRSP: Elliot's short head and long tail
        return fairness.popularity_groups(_long_tail(L, m), L.items.in_train), 2
    return fairness.item_groups(L.items, str(m.param("group")))


def _group_names(L: RankedLists, m: Measure) -> tuple[str, ...]:
    """The names of the item groups ``_groups_of`` numbers: a column's labels or values, sorted, or Elliot's two."""
    assert L.items is not None
    if m.param("group") is None:
        return ("short head", "long tail")
    column = str(m.param("group"))
    labels = (L.items.labels or {}).get(column)
    values = L.items.columns[column]
    present = np.unique(values[~np.isnan(values)])
    return tuple(labels[int(v)] for v in present) if labels is not None else tuple(format(v, "g") for v in present)


def _parity_by_group(L: RankedLists, m: Measure, sums: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
    return _group_names(L, m), fairness.parity_probabilities(sums)[0]


def _parity(opportunity: bool) -> Callable[[RankedLists, Measure], np.ndarray]:
    def parts(L: RankedLists, m: Measure) -> np.ndarray:
        return fairness.parity_parts(L, m.cutoff, *_groups_of(L, m), opportunity, _rel(m))

    return parts


def _parity_finish(L: RankedLists, m: Measure, sums: np.ndarray) -> np.ndarray:
    return fairness.parity_finish(sums)


_PARITY = (
    "std(P) / mean(P) over the item groups (population std), P_g summed over users (Zhu et al.; Elliot). "
    "0 is parity. A system measure."
)
_r(
    MeasureDef(
        "RSP",
        _not_per_query,
        _FAIR + "ranking-based statistical parity: P_g = top-k items of group g / items of g outside the user's "
        "training, " + _PARITY,
        cutoff="required",
        params=(_GROUP,),
        needs=_group_needs,
        system=_always,
        higher_is_better=False,
        parts=_parity(False),
        finish=_parity_finish,
        by_group=_parity_by_group,
        citation="Zhu, Wang & Caverlee, SIGIR 2020",
    )
)
_r(
    MeasureDef(
        "REO",
        _not_per_query,
        _FAIR + "ranking-based equal opportunity: P_g = relevant top-k items of group g / relevant test items of g "
        "outside the user's training, " + _PARITY,
        cutoff="required",
        params=(_GROUP, _EL_REL),
        needs=_group_needs,
        system=_always,
        higher_is_better=False,
        item_reads=_judged,
        parts=_parity(True),
        finish=_parity_finish,
        by_group=_parity_by_group,
        citation="Zhu, Wang & Caverlee, SIGIR 2020",
    )
)
_r(
    MeasureDef(
        "PopRSP",
        _not_per_query,
        _FAIR + "RSP over two popularity groups, Elliot's short head and long tail of the training items.",
        cutoff="required",
        params=(_HEAD,),
        needs=_train,
        system=_always,
        higher_is_better=False,
        parts=_parity(False),
        finish=_parity_finish,
        by_group=_parity_by_group,
        citation="Zhu, Wang & Caverlee, SIGIR 2020",
    )
)
_r(
    MeasureDef(
        "PopREO",
        _not_per_query,
        _FAIR + "REO over two popularity groups, Elliot's short head and long tail of the training items.",
        cutoff="required",
        params=(_HEAD, _EL_REL),
        needs=_train,
        system=_always,
        higher_is_better=False,
        item_reads=_judged,
        parts=_parity(True),
        finish=_parity_finish,
        by_group=_parity_by_group,
        citation="Zhu, Wang & Caverlee, SIGIR 2020",
    )
)


def _mad_parts(L: RankedLists, m: Measure) -> Any:
    group, _ = _groups_of(L, m)
    return fairness.item_mad_parts(L, m.cutoff, group, _text(m, "gain", "ranking"), _rel(m), _text(m, "users", "relevant"))


def _mad_finish(L: RankedLists, m: Measure, sums: np.ndarray) -> np.ndarray:
    return fairness.mad_finish(sums, *_groups_of(L, m), _text(m, "empty_groups", "skip"))


_r(
    MeasureDef(
        "ItemMAD",
        _not_per_query,
        _FAIR + "mean absolute difference between item groups of the recommended items' mean gain (Elliot "
        "ItemMADranking; gain=rating: the predicted score of a relevant item, ItemMADrating). No rank discount. "
        "A system measure; 0 is parity.",
        cutoff="required",
        system=_always,
        higher_is_better=False,
        needs=_group_needs,
        item_reads=lambda m: frozenset({"score"}) if m.param("gain") == "rating" else frozenset(),
        params=(
            _GROUP,
            _EL_REL,
            ParamInfo(
                "gain",
                "text",
                "ranking",
                "ranking: 2^(r - t + 1) - 1 for a relevant item; rating: its score",
                ("ranking", "rating"),
            ),
            ParamInfo(
                "users", "text", "relevant", "relevant: users with a relevant test item (Elliot); all", ("relevant", "all")
            ),
            ParamInfo(
                "empty_groups",
                "text",
                "skip",
                "skip: a group without recommended items leaves the pairs; nan: the value is NaN (Elliot)",
                ("skip", "nan"),
            ),
        ),
        by_group=lambda L, m, sums: (_group_names(L, m), fairness.item_group_gains(sums, *_groups_of(L, m))[0]),
        parts=_mad_parts,
        finish=_mad_finish,
        citation="Deldjoo et al., UMUAI 2021",
    )
)


def _user_mad_parts(L: RankedLists, m: Measure) -> np.ndarray:
    return fairness.user_mad_parts(L, m.cutoff, _text(m, "gain", "ranking"), _rel(m), _text(m, "users", "relevant"))


_r(
    MeasureDef(
        "UserMAD",
        _not_per_query,
        _FAIR + "mean absolute difference between user groups (the dataset's segments) of the users' nDCG@k with graded "
        "gains 2^(r - t + 1) - 1 (Elliot UserMADranking; gain=rating: their mean predicted score in the top k, Elliot "
        "UserMADrating). A system measure; 0 is parity.",
        cutoff="required",
        system=_always,
        higher_is_better=False,
        needs=lambda m: frozenset({"user_groups"}),
        item_reads=lambda m: frozenset({"score"}) if m.param("gain") == "rating" else frozenset(),
        params=(
            _EL_REL,
            ParamInfo(
                "gain",
                "text",
                "ranking",
                "ranking: the user's graded nDCG@k; rating: its mean predicted score",
                ("ranking", "rating"),
            ),
            ParamInfo(
                "users", "text", "relevant", "relevant: users with a relevant test item (Elliot); all", ("relevant", "all")
            ),
            ParamInfo(
                "empty_groups", "text", "skip", "skip: a group without users leaves the pairs; nan: NaN (Elliot)", ("skip", "nan")
            ),
        ),
        parts=_user_mad_parts,
        finish=lambda L, m, sums: fairness.user_mad_finish(sums, _text(m, "empty_groups", "skip")),
        by_group=lambda L, m, sums: (
            L.items.user_group_names if L.items is not None else (),
            fairness.parity_probabilities(sums)[0],
        ),
        citation="Deldjoo et al., UMUAI 2021",
    )
)


def _bias_cell(L: RankedLists, m: Measure) -> tuple[np.ndarray, int, int]:
    """(item group per code, the category's group index, the user group's index) of a BiasDisparity cell."""
    assert L.items is not None
    group, category = _category_of(L, m)
    name = str(m.param("user_group"))
    if name not in L.items.user_group_names:
        raise MeasureError(
            f"{m}: user group {name!r} is not in the segments", hint=f"the user groups: {', '.join(L.items.user_group_names)}"
        )
    return group, category, L.items.user_group_names.index(name)


def _bias_parts(L: RankedLists, m: Measure) -> np.ndarray:
    group, value, user_group = _bias_cell(L, m)
    return fairness.bias_parts(L, m.cutoff, group, value, user_group)


def _bias_finish(L: RankedLists, m: Measure, sums: np.ndarray) -> np.ndarray:
    assert L.items is not None
    return fairness.bias(L.items, *_bias_cell(L, m), _text(m, "kind", "BD"), sums)


_r(
    MeasureDef(
        "BiasDisparity",
        _not_per_query,
        _FAIR + "bias disparity of one (user group, item category) cell (Tsintzou et al.; Elliot BiasDisparityBR/BS/BD): "
        "BR = the category's share of the group's top-k items over its share of the catalogue, BS the same over the "
        "group's training items, BD = (BR - BS) / BS. A system measure with a target: 0 for BD (no amplified bias, "
        "signed), 1 for BR and BS (the category's share equals its share of the catalogue); closer is better.",
        cutoff="required",
        system=_always,
        higher_is_better=False,
        target=lambda m: 0.0 if _text(m, "kind", "BD") == "BD" else 1.0,
        needs=lambda m: frozenset({"train", "items", "user_groups", f"column:{m.param('group')}"}),
        params=(
            _GROUP,
            ParamInfo(
                "category", "label", None, "the item category: a value (number or label) of the group column", required=True
            ),
            ParamInfo("user_group", "text", None, "the user group: a segment name", required=True),
            ParamInfo(
                "kind",
                "text",
                "BD",
                "BD (disparity), BR (bias in the recommendations), BS (in the training data)",
                ("BD", "BR", "BS"),
            ),
        ),
        parts=_bias_parts,
        finish=_bias_finish,
        citation="Tsintzou, Pitoura & Tsaparas, RMSE workshop at RecSys 2019",
    )
)


# Intent-aware diversity (issue 26): ndeval's measures, spelt as ir_measures spells them ------------------
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
_IA = "intent-aware: "
_IA_CITE = "Clarke et al., SIGIR 2008; ICTIR 2009; ndeval (TREC Web track)"


def _cut(m: Measure) -> int:
    assert m.cutoff is not None
    return m.cutoff


_r(
    MeasureDef(
        "alpha_nDCG",
        lambda L, m: intent.alpha_ndcg(L, _cut(m), _num(m, "alpha", 0.5)),
        _IA + "alpha-nDCG@k: the novelty-discounted DCG (gain sum over the document's subtopics of (1 - alpha)^(earlier "
        "documents of that subtopic), 1/log2(rank + 1)) over that of ndeval's greedy ideal ranking (ndeval alpha-nDCG).",
        cutoff="required",
        params=(_ALPHA,),
        intent_aware=True,
        citation=_IA_CITE,
        default_cutoffs=(5, 10, 20),
    )
)
_r(
    MeasureDef(
        "alpha_DCG",
        lambda L, m: intent.alpha_dcg(L, _cut(m), _num(m, "alpha", 0.5), _text(m, "rank1", "fixed")),
        _IA + "alpha-DCG@k over the ideal-ideal: every subtopic covered at every rank, S (1 - alpha)^(r - 1) (ndeval "
        "alpha-DCG, collection-independent).",
        cutoff="required",
        params=(_ALPHA, _RANK1),
        intent_aware=True,
        citation=_IA_CITE,
        default_cutoffs=(5, 10, 20),
    )
)
_r(
    MeasureDef(
        "ERR_IA",
        lambda L, m: intent.err_ia(L, _cut(m), _num(m, "alpha", 0.5), _text(m, "rank1", "fixed")),
        _IA + "ERR-IA@k: the novelty-discounted gains with discount 1/rank over the ideal-ideal's (ndeval ERR-IA).",
        cutoff="required",
        params=(_ALPHA, _RANK1),
        intent_aware=True,
        citation="Chapelle et al., CIKM 2009; ndeval",
        default_cutoffs=(5, 10, 20),
    )
)
_r(
    MeasureDef(
        "nERR_IA",
        lambda L, m: intent.nerr_ia(L, _cut(m), _num(m, "alpha", 0.5)),
        _IA + "nERR-IA@k: ERR-IA over that of the greedy ideal ranking (ndeval nERR-IA).",
        cutoff="required",
        params=(_ALPHA,),
        intent_aware=True,
        citation="Chapelle et al., CIKM 2009; ndeval",
        default_cutoffs=(5, 10, 20),
    )
)
_r(
    MeasureDef(
        "NRBP",
        lambda L, m: intent.nrbp(L, _num(m, "alpha", 0.5), _num(m, "beta", 0.5), False),
        _IA + "novelty- and rank-biased precision over the whole list: (1 - (1 - alpha) beta) / S x sum of gain(r) "
        "beta^(r - 1) (ndeval NRBP).",
        params=(_ALPHA, _BETA),
        intent_aware=True,
        citation=_IA_CITE,
    )
)
_r(
    MeasureDef(
        "nNRBP",
        lambda L, m: intent.nrbp(L, _num(m, "alpha", 0.5), _num(m, "beta", 0.5), True, m.param("empty") == "nan"),
        _IA + "NRBP over that of the greedy ideal ranking (ndeval nNRBP; 0, not ndeval's NaN, without a relevant subtopic: "
        "empty=nan gives ndeval's, and such a query is left out of the mean).",
        params=(
            _ALPHA,
            _BETA,
            ParamInfo(
                "empty", "text", "zero", "a query without a relevant subtopic: zero, or nan (ndeval: 0 / 0)", ("zero", "nan")
            ),
        ),
        intent_aware=True,
        undefined_skipped=True,
        citation=_IA_CITE,
    )
)
_r(
    MeasureDef(
        "P_IA",
        lambda L, m: intent.precision_ia(L, _cut(m)),
        _IA + "intent-aware precision@k: (document, subtopic) relevant pairs in the top k over k x S (ndeval P-IA).",
        cutoff="required",
        intent_aware=True,
        citation="Agrawal et al., WSDM 2009; ndeval",
        default_cutoffs=(5, 10, 20),
    )
)
_r(
    MeasureDef(
        "StRecall",
        lambda L, m: intent.subtopic_recall(L, _cut(m)),
        _IA + "subtopic recall@k: the subtopics covered by the top k over S (ndeval strec).",
        cutoff="required",
        intent_aware=True,
        citation="Zhai, Cohen & Lafferty, SIGIR 2003; ndeval",
        default_cutoffs=(5, 10, 20),
    )
)
_r(
    MeasureDef(
        "AP_IA",
        lambda L, m: intent.ap_ia(L),
        _IA + "intent-aware average precision: each subtopic's AP over the whole list, averaged over the S subtopics "
        "(ndeval MAP-IA).",
        intent_aware=True,
        citation="Agrawal et al., WSDM 2009; ndeval",
    )
)


# ---- expected exposure of stochastic rankings (Diaz et al.; expeval) ---------------------------------------------------
from harness.kernels import exposure as ee  # noqa: E402  (grouped with its entries)

_EE_PARAMS = (
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
        "harness: a query the run misses has no exposure; expeval: expeval's values "
        "there (its bounds) and its inf for an all-zero exposure vector",
        ("harness", "expeval"),
    ),
)


def _ee_check(m: Measure) -> None:
    problem = ee.user_model_problem(_num(m, "p", 0.5), _num(m, "u", 0.5))
    if problem is not None:
        raise MeasureError(f"{m}: {problem}", hint="expeval's defaults: p=0.5, u=0.5")


def _ee(name: str) -> Callable[[RankedLists, Measure], np.ndarray]:
    """The kernel of one of expeval's measures (``EE-L``, ...): its column of the three, computed together."""

    def kernel(L: RankedLists, m: Measure) -> np.ndarray:
        values = ee.per_query(
            L,
            _text(m, "model", "gerr"),
            _num(m, "p", 0.5),
            _num(m, "u", 0.5),
            m.param("target") == "judged",
            m.param("norm") == "expeval",
            m.param("compat") == "expeval",
        )
        return values[:, ee.MEASURES.index(name)]

    return kernel


_EE = (
    "expected exposure (Diaz et al.): a stochastic run's sampled rankings (its sample column; one ranking per query "
    "without one) give each document its exposure averaged over the samples, e; the target e* shares each relevance "
    "level's exposure equally among its documents. "
)
_EE_CITATION = "Diaz, Mitra, Ekstrand, Biega & Carterette, CIKM 2020; expeval (TREC Fair Ranking)"
for _name, _higher, _meaning in (
    ("EE_L", False, "EE-L = ||e - e*||^2, the expected exposure loss; 0 when every document gets its deserved exposure."),
    ("EE_D", False, "EE-D = ||e||^2, the disparity: lower when the exposure is spread more equally."),
    ("EE_R", True, "EE-R = e . e*, the relevance: higher when the exposure goes where it is deserved."),
):
    _r(
        MeasureDef(
            _name,
            _ee(_name.replace("_", "-")),
            _EE + _meaning,
            params=_EE_PARAMS,
            validate=_ee_check,
            higher_is_better=_higher,
            undefined_skipped=True,
            reads_samples=True,
            citation=_EE_CITATION,
        )
    )
del _name, _higher, _meaning


# Measures whose per-query value is a proportion, in [0, 1] whatever the run and judgments (trec_eval's definitions):
# the range a release guard's betting bound holds in. Others have no range the registry vouches for.
UNIT_INTERVAL = (
    "AP",
    "P",
    "R",
    "Success",
    "F",
    "Rprec",
    "SetP",
    "SetR",
    "SetAP",
    "SetF",
    "RR",
    "Bpref",
    "IPrec",
    "IPrecAvg",
    "nDCG",
    "ERR",
    "Judged",
    "TailShare",
    "APLT",
)
for _name in UNIT_INTERVAL:
    REGISTRY.replace(_name, value_range=(0.0, 1.0))
del _name
# Measures with one value per run, and the interval their definition keeps them in: shares and Gini coefficients in
# [0, 1]; counts, entropies, spreads and mean absolute differences >= 0; Coverage >= 0 only (items recommended outside
# the catalogue count, so it can pass 1); BiasDisparity's BD = (BR - BS) / BS >= -1
_INF = float("inf")


def _coverage_bounds(m: Measure) -> tuple[float, float]:
    """Over the catalogue only its items count (at most 1); over the training items others count too (no bound)."""
    return (0.0, 1.0) if _text(m, "catalog", "train") == "items" else (0.0, _INF)


SYSTEM_BOUNDS = {
    "Coverage": _coverage_bounds,
    "Gini": (0.0, 1.0),
    "ExposureGini": (0.0, 1.0),
    "ExposureShare": (0.0, 1.0),
    "RecItems": (0.0, _INF),
    "Entropy": (0.0, _INF),
    "RSP": (0.0, _INF),
    "REO": (0.0, _INF),
    "PopRSP": (0.0, _INF),
    "PopREO": (0.0, _INF),
    "ItemMAD": (0.0, _INF),
    "UserMAD": (0.0, _INF),
    "BiasDisparity": (-1.0, _INF),
}
for _name, _bounds in SYSTEM_BOUNDS.items():
    REGISTRY.replace(_name, system_bounds=_bounds if callable(_bounds) else lambda m, b=_bounds: b)
del _name, _bounds
