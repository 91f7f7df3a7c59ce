"""The comparisons as typed values: what the decision and the report read, and what ``comparisons.csv`` holds.

One :class:`Comparison` per dataset x segment x measure x pair (system b against system a),
one :class:`Anova` per dataset x segment x measure with three systems or more; both in
:class:`Comparisons`, which finds a pair's row and writes the tables.

>>> row = Comparison.from_record({"dataset": "d", "segment": "all", "measure": "AP", "system_a": "a", "system_b": "b",
...     "aggregate": "mean", "mean_a": 0.2, "mean_b": 0.3, "delta": 0.1, "ci_low_t": 0.05, "ci_high_t": 0.15,
...     "n_queries": 50, "p_t": 0.001, "p_t_adj": 0.002, "p_adj": 0.002, "significant": True})
>>> found = Comparisons((row,)).find("d", "all", "AP", "b", "a")   # asked the other way round: negated exactly
>>> found.delta, found.ci_low_t, found.ci_high_t, found.p["t"]
(-0.1, -0.15, -0.05, 0.001)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from harness.config.defaults import DEFAULT_TESTS
from harness.stats.paired import interval_sd

if TYPE_CHECKING:
    import pandas as pd

Aggregate = Literal["mean", "gmean", "sum", "system"]
TEST_NAMES = (*DEFAULT_TESTS, "version", "ppi")  # p_<test>, p_<test>_adj (version: over seeds; ppi: a judged mean)
_NAN = float("nan")
FEW_QUERIES = 30  # a comparison over fewer queries is flagged (few_queries)

# comparisons.csv's columns before the raw p-values, and between them and the corrected ones, in the file's order
_HEAD = (
    "dataset",
    "segment",
    "measure",
    "system_a",
    "system_b",
    "aggregate",
    "mean_a",
    "mean_b",
    "delta",
    "ci_low",
    "ci_high",
    "ci_low_t",
    "ci_high_t",
    "ci_low_bootstrap",
    "ci_high_bootstrap",
    "effect_size",
    "higher_is_better",
    "target",
    "wins",
    "ties",
    "losses",
    "n_queries",
    "few_queries",
    "n_dropped_nan",
    "p_tukey_hsd",
    "n_queries_tukey",
    "p_floor",
)
_PLANNING = ("mde", "n_needed", "effect_size_low", "effect_size_high")
_TAIL = (
    "resolution_limited",
    "p_adj",
    "significant",
    "primary_test",
    "resampled",
    "correction",
    "family",
    "alpha",
    "permutations",
    "resamples",
    "seed",
)
# a judged dataset's rows (estimator ppi or judge): people's sample, the judge's queries, lambda, the judge's numbers
_JUDGED = (
    "estimator",
    "n_human",
    "n_judge",
    "lambda",
    "judge_mean_a",
    "judge_mean_b",
    "judge_delta",
    "judge_ci_low",
    "judge_ci_high",
)


@dataclass(frozen=True)
class Comparison:
    """System b against system a on one measure, dataset and segment: the columns of ``comparisons.csv``.

    ``p`` and ``p_corrected`` hold each test's raw and corrected p by test name (the file's
    ``p_<test>`` and ``p_<test>_adj``). ``mean_difference`` and ``sd_difference`` are the paired
    t-test's own statistics of the differences on the test's scale (logs for a geometric mean),
    from exact sums; the file does not hold them, so a row read back from it derives them from
    its t interval.
    """

    dataset: str
    segment: str
    measure: str
    system_a: str
    system_b: str
    aggregate: Aggregate
    mean_a: float
    mean_b: float
    delta: float
    ci_low: float = _NAN
    ci_high: float = _NAN
    ci_low_t: float = _NAN
    ci_high_t: float = _NAN
    ci_low_bootstrap: float = _NAN
    ci_high_bootstrap: float = _NAN
    effect_size: float = _NAN
    higher_is_better: bool = True
    target: float = _NAN  # the value the measure is best at, when inside its range (BiasDisparity's BD: 0): closer wins
    wins: int = 0
    ties: int = 0
    losses: int = 0
    n_queries: int = 0
    few_queries: bool = False
    n_dropped_nan: int = 0
    p_tukey_hsd: float = _NAN
    n_queries_tukey: int = 0
    p_floor: float = _NAN
    p: Mapping[str, float] = field(default_factory=dict)
    mde: float = _NAN
    n_needed: float = _NAN
    effect_size_low: float = _NAN
    effect_size_high: float = _NAN
    p_corrected: Mapping[str, float] = field(default_factory=dict)
    resolution_limited: bool = False
    p_adj: float = _NAN
    significant: bool = False
    primary_test: str = "randomization"
    resampled: bool = True  # whether the randomization test and the bootstrap ran (stats.resampling: auto, t trusted)
    correction: str = "holm"
    family: str = "per_measure"
    alpha: float = 0.05
    permutations: int = 0
    resamples: int = 0
    seed: int = 0
    mean_difference: float = _NAN
    sd_difference: float = _NAN
    version_note: str = ""  # the version claim: the runs compared and the seeds' share, or why it has no test
    # a dataset with a model judge (harness.comparison.judged): "ppi" where people's labels correct the judge's (the
    # values, interval and p above are the corrected ones), "judge" for the judge's values alone, "" without a judge
    estimator: str = ""
    n_human: int = 0  # the queries people judged, of the n_judge the judge labelled
    n_judge: int = 0
    lam: float = _NAN  # the column lambda: PPI++'s weight of the judge's values
    judge_mean_a: float = _NAN
    judge_mean_b: float = _NAN
    judge_delta: float = _NAN
    judge_ci_low: float = _NAN
    judge_ci_high: float = _NAN
    judge_p: Mapping[str, float] = field(default_factory=dict)  # the tests of the judge's values alone, by test name
    estimator_note: str = ""  # why a judged row has no corrected value

    @property
    def better(self) -> bool:
        """Is b better than a (in the measure's direction: for a measure with a target, closer to it), whether or not
        significantly?"""
        if self.target == self.target:
            return abs(self.mean_b - self.target) < abs(self.mean_a - self.target)
        return (self.delta > 0) == self.higher_is_better and self.delta != 0

    def to_record(self) -> dict[str, Any]:
        """The row of ``comparisons.csv``, its columns in the file's order."""
        out: dict[str, Any] = {name: getattr(self, name) for name in _HEAD}
        out.update({f"p_{test}": value for test, value in self.p.items()})
        out.update({name: getattr(self, name) for name in _PLANNING})
        out.update({f"p_{test}_adj": value for test, value in self.p_corrected.items()})
        out.update({name: getattr(self, name) for name in _TAIL})
        if self.version_note:
            out["version_note"] = self.version_note
        if self.estimator:
            out.update({name: getattr(self, "lam" if name == "lambda" else name) for name in _JUDGED})
            out.update({f"judge_p_{test}": value for test, value in self.judge_p.items()})
            out["estimator_note"] = self.estimator_note
        return out

    @classmethod
    def from_record(cls, row: Mapping[str, Any]) -> Comparison:
        """A row as :meth:`to_record` writes it (or as read back from the file); missing columns take the defaults."""
        names = {f.name for f in dataclasses.fields(cls)} - {"p", "p_corrected", "mean_difference", "sd_difference", "judge_p"}
        values: dict[str, Any] = {k: _plain(v) for k, v in row.items() if k in names}
        for text in ("version_note", "estimator", "estimator_note"):
            if not isinstance(values.get(text, ""), str):  # read back from a table where other rows have one
                values[text] = ""
        for count in ("n_human", "n_judge"):
            if count in values:
                values[count] = int(values[count]) if values[count] == values[count] else 0
        if "lambda" in row:
            values["lam"] = float(row["lambda"])
        values["judge_p"] = {k[8:]: float(v) for k, v in row.items() if k.startswith("judge_p_") and k[8:] in TEST_NAMES}
        # in the row's own order of the tests (the config's)
        values["p"] = {k[2:]: float(v) for k, v in row.items() if k.startswith("p_") and k[2:] in TEST_NAMES}
        values["p_corrected"] = {
            k[2:-4]: float(v) for k, v in row.items() if k.startswith("p_") and k.endswith("_adj") and k[2:-4] in TEST_NAMES
        }
        low, high, n = float(row.get("ci_low_t", _NAN)), float(row.get("ci_high_t", _NAN)), int(row.get("n_queries", 0))
        values.setdefault("mean_difference", row.get("mean_difference", (low + high) / 2))
        values.setdefault("sd_difference", row.get("sd_difference", interval_sd(n, low, high) if n >= 2 else _NAN))
        return cls(**values)

    def reversed(self) -> Comparison:
        """The same comparison read as a against b: every difference and interval negated exactly, wins and losses
        swapped; the p-values are those of the same two-sided tests."""
        return dataclasses.replace(
            self,
            system_a=self.system_b,
            system_b=self.system_a,
            mean_a=self.mean_b,
            mean_b=self.mean_a,
            delta=-self.delta,
            ci_low=-self.ci_high,
            ci_high=-self.ci_low,
            ci_low_t=-self.ci_high_t,
            ci_high_t=-self.ci_low_t,
            ci_low_bootstrap=-self.ci_high_bootstrap,
            ci_high_bootstrap=-self.ci_low_bootstrap,
            effect_size=-self.effect_size,
            effect_size_low=-self.effect_size_high,
            effect_size_high=-self.effect_size_low,
            wins=self.losses,
            losses=self.wins,
            mean_difference=-self.mean_difference,
            judge_mean_a=self.judge_mean_b,
            judge_mean_b=self.judge_mean_a,
            judge_delta=-self.judge_delta,
            judge_ci_low=-self.judge_ci_high,
            judge_ci_high=-self.judge_ci_low,
        )


@dataclass(frozen=True)
class Anova:
    """The two-way ANOVA (systems x queries) of one measure: a row of ``anova.csv``."""

    dataset: str
    segment: str
    measure: str
    systems: int
    n_queries: int
    F: float
    p: float
    df_systems: float
    df_residual: float
    residual_variance: float

    def to_record(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_record(cls, row: Mapping[str, Any]) -> Anova:
        return cls(**{f.name: _plain(row[f.name]) for f in dataclasses.fields(cls)})


@dataclass(frozen=True)
class Comparisons:
    """Every comparison of an experiment (and its ANOVAs), in dataset, segment, pair, measure order."""

    rows: tuple[Comparison, ...] = ()
    anova: tuple[Anova, ...] = ()

    def __iter__(self) -> Iterator[Comparison]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def find(self, dataset: str, segment: str, measure: str, system_a: str, system_b: str) -> Comparison | None:
        """The row of b against a, or of a against b read the other way round; None when the pair was not compared."""
        row = self._by_pair.get((dataset, segment, measure, system_a, system_b))
        if row is not None:
            return row
        row = self._by_pair.get((dataset, segment, measure, system_b, system_a))
        return None if row is None else row.reversed()

    @cached_property
    def _by_pair(self) -> dict[tuple[str, str, str, str, str], Comparison]:
        return {(r.dataset, r.segment, r.measure, r.system_a, r.system_b): r for r in self.rows}

    def frame(self) -> pd.DataFrame:
        """``comparisons.csv`` as a DataFrame."""
        import pandas as pd

        return pd.DataFrame([r.to_record() for r in self.rows])

    def anova_frame(self) -> pd.DataFrame | None:
        """``anova.csv`` as a DataFrame; None without an ANOVA (fewer than three systems)."""
        import pandas as pd

        return pd.DataFrame([r.to_record() for r in self.anova]) if self.anova else None

    @classmethod
    def from_frames(cls, comparisons: pd.DataFrame | None, anova: pd.DataFrame | None = None) -> Comparisons:
        """The tables as written (a results folder read back)."""
        rows = (
            ()
            if comparisons is None
            else tuple(Comparison.from_record({str(k): v for k, v in r.items()}) for r in comparisons.to_dict("records"))
        )
        groups = (
            () if anova is None else tuple(Anova.from_record({str(k): v for k, v in r.items()}) for r in anova.to_dict("records"))
        )
        return cls(rows, groups)


def _plain(value: Any) -> Any:
    """numpy scalars (as a DataFrame holds them) as Python's."""
    return value.item() if hasattr(value, "item") else value


__all__ = ["Aggregate", "Anova", "Comparison", "Comparisons"]
