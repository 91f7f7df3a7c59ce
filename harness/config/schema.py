"""Frozen dataclasses for an experiment; nothing downstream reads raw dicts."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from harness.config.defaults import (
    DEFAULT_ALPHA,
    DEFAULT_CORRECTION,
    DEFAULT_FAMILY,
    DEFAULT_MIN_AFFECTED,
    DEFAULT_PERMUTATIONS,
    DEFAULT_POWER,
    DEFAULT_PRIMARY,
    DEFAULT_RESAMPLING,
    DEFAULT_SEED,
    DEFAULT_TESTS,
)
from harness.measures.conventions import Conventions
from harness.measures.peers import by_conventions, conventions_apart
from harness.measures.registry import REGISTRY
from harness.measures.spec import Measure
from harness.stats.bounds import BoundChoice


@dataclass(frozen=True)
class TableColumns:
    """Column names of a table input (ignored for TREC files)."""

    query: str = "query"
    doc: str = "doc"
    value: str = "relevance"  # relevance for qrels, score for runs
    sample: str | None = None  # runs: a stochastic run's sample column (which sampled ranking a row is in)


@dataclass(frozen=True)
class Segments:
    """A file mapping each query (user) to a segment, e.g. new vs returning users."""

    path: Path
    query_column: str = "query"
    segment_column: str = "segment"


@dataclass(frozen=True)
class TrainSpec:
    """Training interactions (user, item rows): popularity, each user's history, co-occurrence."""

    path: Path
    user: str = "user"
    item: str = "item"


@dataclass(frozen=True)
class ItemsSpec:
    """The item catalogue: its id column; every other column a numeric item feature, or a group column (text labels,
    or named in ``groups``: read as labels, never as features)."""

    path: Path
    id: str = "item"
    groups: tuple[str, ...] = ()


Sample = Literal["random", "stratified"]


@dataclass(frozen=True)
class Judge:
    """A model judge's labels of a dataset's queries (``judge:``): it labels every query evaluated, and people's
    judgments (the dataset's ``qrels:``) cover a sample of them, drawn at random (``sample: random``) or at random
    within each stratum of ``strata`` (``sample: stratified``). People's labels then correct the judge's values
    (:mod:`harness.stats.ppi`). ``grades``: the judge's grades on people's scale, (judge's, people's) pairs."""

    qrels: Path
    qrels_format: str
    columns: TableColumns
    name: str = "judge"
    grades: tuple[tuple[float, float], ...] = ()
    sample: Sample = "random"
    strata: Segments | None = None  # sample: stratified: each query's stratum (its segment_column)


@dataclass(frozen=True)
class Dataset:
    name: str
    qrels: Path
    qrels_format: str  # trec | csv | tsv | parquet | jsonl
    qrels_columns: TableColumns
    run_columns: TableColumns
    relevance_level: int
    segments: Segments | None = None
    train: TrainSpec | None = None
    items: ItemsSpec | None = None
    judge: Judge | None = None

    def inputs(self) -> frozenset[str]:
        """What beyond-accuracy measures can read here: 'train', 'items', 'features' (checked when the file is read),
        'user_groups' (the segments)."""
        return (
            frozenset({"train"} if self.train else set())
            | frozenset({"items", "features"} if self.items else set())
            | frozenset({"user_groups"} if self.segments else set())
        )


@dataclass(frozen=True)
class ModelRef:
    """A model in MLflow's registry: ``models:/NAME/VERSION``, ``models:/NAME@ALIAS``, or a logged model's id
    (``models:/m-...`` or ``m-...``). An alias is resolved once, when the run starts, and pinned: ``version`` and
    ``model_id`` then say which model the numbers are about, whatever the alias points at later.

    >>> ModelRef.parse("models:/recsys@champion")
    ModelRef(uri='models:/recsys@champion', name='recsys', version=None, alias='champion', model_id=None)
    >>> ModelRef.parse("models:/recsys/3").version, ModelRef.parse("m-4f2a").model_id
    ('3', 'm-4f2a')
    """

    uri: str
    name: str | None = None
    version: str | None = None
    alias: str | None = None
    model_id: str | None = None  # the logged model (MLflow 3): metrics are linked to it

    FORMS = "models:/NAME/VERSION, models:/NAME@ALIAS or a logged model's id (m-...)"

    @classmethod
    def parse(cls, text: str) -> ModelRef:
        """The reference a config or ``evaluator_config`` writes; ValueError (with the forms it takes) otherwise."""
        rest = text.removeprefix("models:/")
        if rest.startswith("m-") and "/" not in rest and "@" not in rest and len(rest) > 2:
            return cls(text, model_id=rest)
        if rest != text and "@" in rest and "/" not in rest:
            name, _, alias = rest.rpartition("@")
            if name and alias:
                return cls(text, name=name, alias=alias)
        if rest != text and "/" in rest:
            name, _, version = rest.rpartition("/")
            if name and version.isdigit():
                return cls(text, name=name, version=version)
        raise ValueError(f"{text!r} is not a model reference: write {cls.FORMS}")

    @property
    def pinned(self) -> str:
        """What the numbers are about, as a person reads it: ``recsys v3 (m-4f2a)``."""
        named = f"{self.name} v{self.version}" if self.name and self.version else self.name or ""
        return " ".join(x for x in (named, f"({self.model_id})" if named and self.model_id else self.model_id) if x)


@dataclass(frozen=True)
class Previous:
    """Per-query values computed before: a results folder, an MLflow run harness logged, or the latest harness
    evaluation of a registered model (``model``: ``models:/recsys@champion``)."""

    results: Path | None = None
    mlflow_run: str | None = None
    uri: str | None = None  # the tracking server of mlflow_run or model (default: MLFLOW_TRACKING_URI or the local store)
    system: str | None = None  # the system's name there (default: the same name, or the one the evaluation tagged)
    line: int | None = None
    model: ModelRef | None = None


@dataclass(frozen=True)
class System:
    """A system and its run files. A dataset may have several runs of it, one per training seed (``seeds`` labels
    them, in the order of ``runs``; ``""`` for a dataset's only run); ``seed`` picks one of them to evaluate.

    >>> s = System("v2", (("d", Path("v2-s1.csv")), ("d", Path("v2-s2.csv"))), seeds=("v2-s1", "v2-s2"))
    >>> [(label, path.name) for label, path in s.runs_of("d")]
    [('v2-s1', 'v2-s1.csv'), ('v2-s2', 'v2-s2.csv')]
    >>> [label for label, _ in dataclasses.replace(s, seed="v2-s2").runs_of("d")]
    ['v2-s2']
    """

    name: str
    runs: tuple[tuple[str, Path], ...]  # (dataset name, run file); a dataset once per seed
    description: str = ""
    tags: tuple[tuple[str, str], ...] = ()
    previous: Previous | None = None  # instead of runs: reuse the values of an earlier evaluation
    model: ModelRef | None = None  # the registered model these runs are of: metrics are linked to it in MLflow
    seeds: tuple[str, ...] = ()  # each run's seed label, in the order of runs (empty: "" for every run)
    seed: str | None = None  # the one seed evaluated (claim: model), or None: every run

    def runs_of(self, dataset: str) -> tuple[tuple[str, Path], ...]:
        """(seed label, run file) of each run evaluated on ``dataset``."""
        labels = self.seeds or ("",) * len(self.runs)
        return tuple(
            (label, path)
            for (d, path), label in zip(self.runs, labels, strict=True)
            if d == dataset and (self.seed is None or label == self.seed)
        )

    def run_for(self, dataset: str) -> Path | None:
        """The run file evaluated on ``dataset`` (the first, of several seeds); None without one."""
        runs = self.runs_of(dataset)
        return runs[0][1] if runs else None

    def each_run(self, dataset: str) -> tuple[System, ...]:
        """The system once per run evaluated on ``dataset``, each with that run alone, labelled by its seed when it is
        one of several (a run ``seed:`` picks is the system's only run, as if named alone)."""
        runs = self.runs_of(dataset)
        return tuple(
            dataclasses.replace(self, runs=((dataset, path),), seeds=(label,) if len(runs) > 1 else (), seed=None)
            for label, path in runs
        )

    @property
    def run_label(self) -> str:
        """The seed label of a system holding one run (:meth:`each_run`); "" when it is its dataset's only run."""
        return self.seeds[0] if len(self.seeds) == 1 else ""

    def seeded(self, dataset: str) -> bool:
        """Whether ``dataset`` has several runs of this system evaluated (its seeds)."""
        return len(self.runs_of(dataset)) > 1


Test = Literal["t", "wilcoxon", "randomization", "bootstrap"]
TESTS: tuple[Test, ...] = DEFAULT_TESTS
Correction = Literal["holm", "bonferroni", "bh", "none"]
Family = Literal["per_measure", "grid"]
NanPolicy = Literal["error", "drop"]
Mode = Literal["baseline", "all_pairs"]  # against the baseline, or every pair
Claim = Literal["model", "version"]  # what a comparison is about: these trained runs, or the training procedures
# where the resampling tests run: only on comparisons where the t approximation cannot be trusted, or on every one
Resampling = Literal["auto", "always"]


@dataclass(frozen=True)
class Stats:
    """Paired significance testing between systems: the config's ``stats`` section, and the comparisons' settings."""

    tests: tuple[Test, ...] = TESTS
    primary: Test = DEFAULT_PRIMARY  # the test whose corrected p decides significance
    # auto: where auto's rule trusts t on a comparison's differences, its p and interval are t's and the randomization
    # test and the bootstrap are not run there (they would add only their Monte Carlo error); always: every test
    resampling: Resampling = DEFAULT_RESAMPLING
    correction: Correction = DEFAULT_CORRECTION
    family: Family = DEFAULT_FAMILY
    mode: Mode = "baseline"  # baseline needs a baseline system
    alpha: float = DEFAULT_ALPHA
    permutations: int = DEFAULT_PERMUTATIONS
    resamples: int = DEFAULT_PERMUTATIONS
    # system measures (coverage, entropy, Gini): replicates of the randomization test and the bootstrap over users;
    # each recomputes the measures over every listed row, so the cost is replicates x run rows (per segment)
    system_resamples: int = 200
    seed: int = DEFAULT_SEED
    nan: NanPolicy = "error"  # a NaN per-query value stops the run, or drops that query from that comparison
    enabled: bool = True
    # these trained runs (one per system), or the training procedures over their seeds; the loader resolves the
    # default: version when a system has several runs of a dataset, else model
    claim: Claim = "model"


@dataclass(frozen=True)
class Tracking:
    enabled: bool = True
    uri: str | None = None  # None: a local SQLite store inside the output folder
    experiment: str | None = None  # None: the experiment's name
    uri_on_command_line: bool = False  # uri came from --set tracking.uri=...: it wins over MLFLOW_TRACKING_URI
    record_paths: bool = False  # local paths in tags, params, provenance.json and the report: names relative to the config


@dataclass(frozen=True)
class Engine:
    """How the work is spread; every engine gives the same numbers, bit for bit.

    ``local``: one machine, ``workers`` runs evaluated at once (threads). ``dask``: each run
    and the judgments are shuffled by query onto a Dask cluster (``scheduler``: an address, or
    ``local`` for a LocalCluster of ``n_workers`` with ``memory_limit`` each) in ``partitions``
    pieces, and every piece is evaluated by the single-machine code.
    """

    workers: int | None = None  # None: as many as the machine has cores, at most one per run
    name: Literal["local", "dask"] = "local"
    scheduler: str | None = None  # dask: "tcp://host:8786", or None / "local" (an active Client if any, else a LocalCluster)
    n_workers: int | None = None  # dask LocalCluster: None = one per core
    memory_limit: str | None = None  # dask LocalCluster, per worker: "768MiB"; None = the machine's memory shared
    partitions: int | None = None  # dask: None = one per ~200,000 run rows


Condition = Literal["max_drop", "max_drop_pct", "min_gain"]  # a guard's test (harness.config.guards)
OnInconclusive = Literal["inconclusive", "fail", "pass"]  # what an INCONCLUSIVE gate exits as


@dataclass(frozen=True)
class Guard:
    """A release guard: one one-sided test of one measure, with a stated margin (:mod:`harness.config.guards`)."""

    measure: Measure
    condition: Condition  # max_drop | max_drop_pct | min_gain
    threshold: float  # the margin as written: an absolute drop, a percentage of production, or a gain
    dataset: str | None = None  # None: every dataset (for a segment guard, every dataset that has the segment)
    segment: str | None = None
    descriptive: bool = False  # point estimates only: shown, never deciding the gate
    line: int | None = None  # where the config declares it, for errors found when the data is read

    @property
    def sign(self) -> float:
        """1 where a larger value of the measure is better, -1 where a smaller one is: the drop from production to
        the candidate is ``sign * (production - candidate)``.

        >>> Guard(Measure("AP"), "max_drop", 0.01).sign, Guard(Measure("ARP", cutoff=10), "max_drop", 0.01).sign
        (1.0, -1.0)
        """
        return 1.0 if REGISTRY.definition(self.measure).higher(self.measure) else -1.0

    def margin(self, production: Any = 0.0) -> Any:
        """The drop the guard allows, in the measure's units (a negative one: the gain it requires): ``max_drop``'s
        threshold, ``min_gain``'s negated, or ``max_drop_pct``'s share of ``production`` (a value, or an array of
        them).

        >>> Guard(Measure("AP"), "max_drop", 0.01).margin(), Guard(Measure("AP"), "min_gain", 0.01).margin()
        (0.01, -0.01)
        >>> Guard(Measure("AP"), "max_drop_pct", 5.0).margin(0.5)
        0.025
        """
        if self.condition == "max_drop_pct":
            return self.threshold / 100 * production
        return self.threshold if self.condition == "max_drop" else -self.threshold


@dataclass(frozen=True)
class Release:
    production: str
    candidate: str
    guards: tuple[Guard, ...] = ()
    on_inconclusive: OnInconclusive = "inconclusive"  # its own exit code; or mapped to fail / pass
    power: float = DEFAULT_POWER  # the power "users needed" plans for
    bound: BoundChoice = "auto"  # how a guard on a mean is bounded (harness.stats.bounds): auto, t or betting
    promote: Promote | None = None  # on PASS, move a registry alias to the candidate's model version
    looks: int = 1  # the gate's planned looks as users accrue: alpha is spent over them (harness.stats.looks)
    # the rarest harm (a share of users) auto's t must not miss: t decides a measure with a known range only from
    # harness.stats.bounds.t_trusted_from(min_affected, alpha) users on; None: no such rule (a folder decided before it)
    min_affected: float | None = DEFAULT_MIN_AFFECTED


@dataclass(frozen=True)
class Promote:
    """``release.promote: {model: recsys, alias: champion}``: on PASS, the alias moves to the candidate's version of
    that registered model, provided it still points at the version production was (or at none): never over a
    release someone else made meanwhile."""

    model: str
    alias: str


@dataclass(frozen=True)
class ReportSpec:
    enabled: bool = True
    title: str | None = None


@dataclass(frozen=True)
class Experiment:
    name: str
    source: Path  # the config file
    datasets: tuple[Dataset, ...]
    systems: tuple[System, ...]
    measures: tuple[Measure, ...]
    cutoffs: tuple[int, ...]
    conventions: Conventions
    profile: str
    gain_schemes: tuple[tuple[str, str], ...]  # (name, canonical gain parameter text)
    output: Path
    description: str = ""
    # per_query.csv beside per_query.parquet (output: {csv: true}); the other tables always get their CSV twin
    per_query_csv: bool = False
    baseline: str | None = None
    stats: Stats = field(default_factory=Stats)
    tracking: Tracking = field(default_factory=Tracking)
    report: ReportSpec = field(default_factory=ReportSpec)
    release: Release | None = None  # the release gate
    engine: Engine = field(default_factory=Engine)
    # for the user, once: e.g. the ${VAR}s whose values the results, the report and MLflow will show (not recorded)
    notes: tuple[str, ...] = ()
    # the conventions the config sets over the profile's: the user's for every measure, where the profile's tool
    # computes some measures under conventions of their own
    conventions_given: frozenset[str] = frozenset()

    def dataset(self, name: str) -> Dataset:
        return next(d for d in self.datasets if d.name == name)

    def by_conventions(self, measures: tuple[Measure, ...], dataset: Dataset) -> dict[Conventions, list[Measure]]:
        """``measures`` grouped by the conventions each is evaluated under on ``dataset`` (at its relevance level):
        the experiment's, or those the profile's tool uses for it (:func:`~harness.measures.peers.by_conventions`)."""
        here = dataclasses.replace(self.conventions, relevance_level=dataset.relevance_level)
        return by_conventions(self.profile, measures, here, self.conventions_given)

    def measure_conventions(self) -> dict[str, dict[str, object]]:
        """Each measure evaluated under conventions other than the experiment's: measure -> the conventions that
        differ (the profile's tool computes it over other users, say)."""
        apart = conventions_apart(self.profile, self.measures, self.conventions, self.conventions_given)
        return {str(measure): differ for measure, differ in apart.items()}

    def measures_for(self, dataset: Dataset) -> tuple[Measure, ...]:
        """The measures computed on a dataset.

        Beyond-accuracy measures go to the datasets that give training data or a catalogue
        (when some dataset of the experiment does), and only those whose inputs the dataset
        has; an experiment without any computes the ones that need neither (Entropy, RecItems)
        on every dataset.
        """

        recommender_data = any(d.inputs() for d in self.datasets)

        def computed(m: Measure) -> bool:
            definition = REGISTRY.definition(m)
            if definition.beyond_accuracy and recommender_data and not dataset.inputs():
                return False
            return definition.inputs(m) <= dataset.inputs()

        return tuple(m for m in self.measures if computed(m))

    def query_measures_for(self, dataset: Dataset) -> tuple[Measure, ...]:
        """The measures with a value per query (not the system measures: coverage, entropy, Gini) on a dataset."""

        return tuple(m for m in self.measures_for(dataset) if not REGISTRY.definition(m).is_system(m))

    def system(self, name: str) -> System:
        return next(s for s in self.systems if s.name == name)
