"""What a measure is: a declarative definition (:class:`MeasureDef`), its parameters, and the registry type.

A definition states a measure's facts as data (its cutoff, parameters, aggregate, direction, range, the inputs it
reads, trec_eval's and the other tools' names for it) and names the kernel that computes it. The definitions live
by family in :mod:`~harness.measures.accuracy`, :mod:`~harness.measures.beyond_accuracy`,
:mod:`~harness.measures.fairness`, :mod:`~harness.measures.intent_aware` and :mod:`~harness.measures.exposure`;
:mod:`~harness.measures.registry` gathers them. The CLI's listing, the "did you mean" hints, the other tools'
names and ``docs/measures.md``'s tables are written from them.

>>> P = MeasureDef("P", lambda lists, m: None, "Precision at k.", "accuracy", cutoff="required", params=(REL,))
>>> str(P.make({"rel": 2}, 5)), P.higher(P.make({}, 5))
('P(rel=2)@5', True)
>>> str(When("norm", "pyxclib")), When("norm", "pyxclib")(Measure("PSP", (("norm", "pyxclib"),), 5))
('norm=pyxclib', True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from harness.errors import MeasureError
from harness.kernels import fairness
from harness.kernels._segments import RankedLists
from harness.kernels.gains import GainScheme
from harness.measures.spec import Measure, ParamValue

CutoffRule = Literal["none", "optional", "required"]  # whether the measure takes @k
Aggregate = Literal["mean", "sum", "gmean", "count"]  # how the per-query values make the run's value

ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
FAMILIES = ("accuracy", "beyond accuracy", "fairness", "intent-aware", "expected exposure")

# the deepest cutoff a measure takes: deeper than any ranking evaluated, and within every kernel's arrays
MAX_CUTOFF = 1_000_000


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
class When:
    """A fact that holds when a parameter has one value: ``When("weight", "recommendation")`` (Novelty is then a
    system measure), ``When("form", "elliot")`` (Gini is then better higher)."""

    param: str
    value: str

    def __call__(self, measure: Measure) -> bool:
        return measure.param(self.param) == self.value

    def __str__(self) -> str:
        return f"{self.param}={self.value}"


@dataclass(frozen=True)
class SystemValue:
    """How a measure with one value per run, not one per query, gets it, and what is known of that value.

    Either ``kernel``, ``(lists, measure, W) -> (B,)`` under each row of user weights ``W`` (B x queries): a function
    of the distinct items recommended (Coverage, Gini: a catalogue measure); or ``parts`` and ``finish``: each
    user's terms (queries x m, from that user's rows only) and the value from their weighted sums (B x m) -> (B,)
    (REO, RSP, pyxclib's PSP: a function of sums over users, which a partition or a resample carries instead of the
    run). ``when``: the parameter value that makes the measure one (Novelty's ``weight=recommendation``; None:
    always). ``bounds``: the interval the value lies in, where one is known (for some, a function of the measure);
    its bootstrap interval is clipped to it. ``by_group``: each group's value behind it (REO's P_g, each group's
    share of exposure), from the lists and the summed terms, which the report draws.
    """

    kernel: Callable[[RankedLists, Measure, np.ndarray], np.ndarray] | None = None
    parts: Callable[[RankedLists, Measure], Any] | None = None
    finish: Callable[[RankedLists, Measure, np.ndarray], np.ndarray] | None = None
    when: When | None = None
    bounds: tuple[float, float] | Callable[[Measure], tuple[float, float]] | None = None
    by_group: Callable[[RankedLists, Measure, np.ndarray], tuple[tuple[str, ...], np.ndarray]] | None = None

    def __post_init__(self) -> None:  # a definition that contradicts itself is a bug in its family module
        if (self.parts is None) != (self.finish is None) or (self.kernel is None) == (self.parts is None):
            raise ValueError("a system measure has a kernel, or parts and finish")


@dataclass(frozen=True)
class PeerName:
    """Another tool's name for a measure: ``tool``'s ``name`` is harness's ``spelling`` (the measure with the
    parameters that reproduce it). ``read``: harness reads ``name`` as ``spelling`` (``ItemCoverage@10``), for a name
    harness has not taken and a spelling complete without a user's parameter; otherwise it is documentation."""

    tool: str
    name: str
    spelling: str
    read: bool = False


@dataclass(frozen=True)
class MeasureDef:
    """One measure's facts, and the kernel that computes its per-query values (``kernel(lists, measure)``)."""

    name: str
    kernel: Callable[[RankedLists, Measure], np.ndarray]
    description: str
    family: str  # one of FAMILIES: the section of `harness measures` and docs/measures.md it is listed in
    cutoff: CutoffRule = "none"
    params: tuple[ParamInfo, ...] = ()
    # IPrec@0.5 (ir_measures' spelling): a number after @ that is not a whole number sets this parameter
    cutoff_param: str | None = None
    aggregate: Aggregate = "mean"
    higher_is_better: bool = True
    higher_when: When | None = None  # a parameter's value decides the direction (Gini's form=elliot: higher)
    # a measure best at a value inside its range (a signed disparity at 0, a ratio at 1): closer is better, whichever
    # side; None: the direction is higher_is_better's
    target: Callable[[Measure], float] | None = None
    trec_name: str | None = None  # trec_eval's name without a cutoff
    trec_cut_name: str | None = None  # trec_eval's name with a cutoff (P -> P_5)
    aliases: tuple[str, ...] = ()
    peer_names: tuple[PeerName, ...] = ()  # what the other tools call it (docs/measures.md's "reproduces")
    validate: Callable[[Measure], None] | None = None  # checks across parameters, when the name is parsed
    ties_average_ok: bool = False  # exact under ties="average": linear in per-position values
    # the conventions its kernel reads from the lists beyond the aligned rows (ap_denominator, short_lists at a
    # cutoff; ideal_from): what harness explain and --match vary for it. The relevance level is read by every
    # measure with a `rel` parameter, and by gains that start at it (binary, elliot)
    reads_conventions: frozenset[str] = frozenset()
    integer: bool = False  # printed as a whole number (counts)
    defined_without_run: bool = False  # its value for a query the run misses is computed (NumQ, NumRel), not 0
    citation: str = ""
    system: SystemValue | None = None  # one value per run (coverage, entropy, Gini, REO), not per query
    needs: Callable[[Measure], frozenset[str]] | None = None  # inputs beyond qrels and run: train, items, features
    undefined_skipped: bool = False  # NaN = undefined for that user (left out of the mean and of the paired tests)
    item_similarity: bool = False  # compares items pairwise (ILD, Serendipity): its `sim` parameter says how
    item_reads: Callable[[Measure], frozenset[str]] | None = None  # lists' extras: 'judged' item codes, 'score'
    intent_aware: bool = False  # reads subtopic judgments (ndeval's measures)
    reads_samples: bool = False  # reads a stochastic run's sampled rankings (expected exposure)
    # the interval every per-query value lies in, where one is known (proportions: [0, 1]); a release guard's betting
    # bound rests on it (harness.stats.bounds)
    value_range: tuple[float, float] | None = None

    def __post_init__(self) -> None:  # a definition that contradicts itself is a bug in its family module
        if self.family not in FAMILIES:
            raise ValueError(f"{self.name}: unknown family {self.family!r}")

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
        if cutoff is not None and cutoff > MAX_CUTOFF:
            raise MeasureError(
                f"cutoff of {self.name} must be at most {MAX_CUTOFF:,} (a ranking that deep is not evaluated), got {cutoff}",
                hint=f"write {self.name}@1000, or leave the cutoff out to evaluate the whole list",
            )
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
        """The per-query values of ``measure`` (one per query of ``lists``)."""
        return self.kernel(lists, measure)

    def bounds_of(self, measure: Measure) -> tuple[float, float] | None:
        """The interval the measure's value over users lies in: a system measure's own bounds, else its per-query
        range (a mean of values in [0, 1] is in [0, 1]); None where none is known.

        >>> from harness.measures.parse import parse_measure
        >>> from harness.measures.registry import REGISTRY
        >>> REGISTRY.definition(parse_measure("REO(group=g)@10")).bounds_of(parse_measure("REO(group=g)@10"))
        (0.0, inf)
        """
        if self.system is None or not self.is_system(measure):
            return self.range_of(measure)
        bounds = self.system.bounds
        return bounds(measure) if callable(bounds) else bounds

    def is_system(self, measure: Measure) -> bool:
        """One value per run (resampled over users for a CI), not one per query."""
        return self.system is not None and (self.system.when is None or self.system.when(measure))

    def compute_system(self, lists: RankedLists, measure: Measure, weights: np.ndarray) -> np.ndarray:
        """The run's value under each row of user weights (B x queries): ones for the run itself."""
        if self.system is None:
            raise TypeError(f"{measure} has a value per query, not per run")  # a caller's bug
        if self.system.parts is not None and self.system.finish is not None:
            return self.system.finish(lists, measure, self._summed(lists, measure, weights))
        assert self.system.kernel is not None  # SystemValue holds a kernel, or parts and finish
        return self.system.kernel(lists, measure, weights)

    def _summed(self, lists: RankedLists, measure: Measure, weights: np.ndarray) -> np.ndarray:
        """(B x m): the users' terms (as the evaluator attached them, else computed) summed under each row of weights."""
        parts = self.user_terms
        if parts is None:
            raise TypeError(f"{measure} is not a function of sums over users")  # a caller's bug
        stored = None if lists.items is None or lists.items.user_parts is None else lists.items.user_parts.get(measure)
        return fairness.weighted_sums(weights, stored if stored is not None else parts(lists, measure))

    @property
    def user_terms(self) -> Callable[[RankedLists, Measure], Any] | None:
        """Each user's terms of a system measure that is a function of sums over users (None for any other)."""
        return None if self.system is None else self.system.parts

    def group_values(self, lists: RankedLists, measure: Measure) -> tuple[tuple[str, ...], np.ndarray] | None:
        """(the groups' names, the run's value of each) behind a system measure; None when it has no groups."""
        if self.system is None or self.system.by_group is None:
            return None
        summed = self.user_terms is not None
        sums = self._summed(lists, measure, np.ones((1, lists.n_queries))) if summed else np.zeros((1, 0))
        return self.system.by_group(lists, measure, sums)

    def reads(self, measure: Measure) -> frozenset[str]:
        """What the kernel reads of a run besides each row's item: 'judged' (the judged items' codes), 'score'."""
        return frozenset() if self.item_reads is None else self.item_reads(measure)

    def guard_aggregate(self, measure: Measure) -> str:
        """How a release guard sees the measure: ``catalogue`` (one value per run from the distinct items recommended:
        Coverage, Gini ...), ``system`` (one value per run from sums over users: REO, PSP ...) or its aggregate.

        >>> from harness.measures.registry import REGISTRY
        >>> REGISTRY["Coverage"].guard_aggregate(Measure("Coverage", cutoff=10)), REGISTRY["AP"].guard_aggregate(Measure("AP"))
        ('catalogue', 'mean')
        """
        if self.is_system(measure):
            return "system" if self.user_terms is not None else "catalogue"
        return self.aggregate

    def range_of(self, measure: Measure) -> tuple[float, float] | None:
        """The interval every per-query value of ``measure`` lies in, or None where none is known (a custom gain
        below 0 can take a graded measure below 0).

        >>> from harness.measures.registry import REGISTRY
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
        return self.higher_is_better if self.higher_when is None else self.higher_when(measure)

    def target_of(self, measure: Measure) -> float | None:
        """The value a measure is best at when that is inside its range (BiasDisparity's BD at 0, its BR and BS at
        1): a move towards it is better, from either side. None for a measure better higher or lower."""
        return None if self.target is None else self.target(measure)

    def goodness(self, measure: Measure, value: float) -> float:
        """``value`` on a scale where larger is better: the value, its negative, or minus its distance from the target.

        >>> from harness.measures.parse import parse_measure
        >>> from harness.measures.registry import REGISTRY
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
        rel = rel_of(measure)
        level = lists.relevance_level if rel is None else rel
        return GainScheme.binary(level) if kind == "binary" else GainScheme.elliot(level)
    # ranx drops the judgments below its relevance level: linear and exponential gains start there too
    floor = lists.relevance_level if lists.graded_below_level_zero else 0.0
    return GainScheme.exponential(floor) if kind == "exp" else GainScheme.linear(floor)


def rel_of(m: Measure) -> float | None:
    """The measure's relevance threshold ``rel``; None: the lists' relevance level."""
    value = m.param("rel")
    return None if value is None else float(value)  # type: ignore[arg-type]


def number_of(m: Measure, key: str, default: float) -> float:
    """A numeric parameter's value, ``default`` when the measure leaves it out."""
    return float(m.param(key, default))  # type: ignore[arg-type]


def text_of(m: Measure, key: str, default: str) -> str:
    """A text parameter's value, ``default`` when the measure leaves it out."""
    return str(m.param(key, default))


def cutoff_of(m: Measure) -> int:
    """The cutoff of a measure that requires one (its definition says so)."""
    if m.cutoff is None:
        raise TypeError(f"{m} has no cutoff")  # parse_measure refuses it: a caller's bug
    return m.cutoff


def not_per_query(lists: RankedLists, m: Measure) -> np.ndarray:
    """The per-query kernel of a measure with one value per run: asking for it is a caller's bug."""
    raise TypeError(f"{m} is a system measure: use compute_system")


class Registry:
    """Name (and alias) -> definition, in the order given; a name given twice is a bug and fails.

    >>> registry = Registry([MeasureDef("P", not_per_query, "Precision.", "accuracy", aliases=("Precision",))])
    >>> registry.get("precision").name, registry.all_names()
    ('P', ['P', 'Precision'])
    """

    def __init__(self, definitions: Iterable[MeasureDef]) -> None:
        self._defs: dict[str, MeasureDef] = {}
        self._lookup: dict[str, MeasureDef] = {}
        for definition in definitions:
            for name in (definition.name, *definition.aliases):
                if name.lower() in self._lookup:
                    raise ValueError(f"measure name {name!r} registered twice")
                self._lookup[name.lower()] = definition
            self._defs[definition.name] = definition

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
