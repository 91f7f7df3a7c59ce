"""How many users a decision needs: :class:`Plan`, from a given or estimated sd, or from a gate's bootstrap guard.

>>> Plan.of(sd=0.23, margin=0.01).n_queries   # one-sided t at 0.05, 80% power; (1.645 + 0.842)^2 (0.23 / 0.01)^2 = 3271
3272
"""

from __future__ import annotations

import dataclasses
import math
import sys
from dataclasses import dataclass
from html import escape
from typing import Any

from harness.config.defaults import DEFAULT_POWER
from harness.decision.verdict import BOOTSTRAP, PPI, T_TEST, GuardResult
from harness.errors import HarnessError
from harness.stats import bounds, power
from harness.stats.power import Sided
from harness.stats.ppi import PeoplePlan

SD_CONFIDENCE = 0.9  # how sure a plan from a pilot's sd is of reaching its power (Plan.sd_upper)


@dataclass(frozen=True)
class Plan:
    """How many users a paired t-test needs (Sakai's topic-set-size design): ``n_queries`` for ``power`` to resolve a
    true distance ``margin`` from the tested value, when the per-user differences have standard deviation ``sd``.

    For a ``max_drop: m`` guard (one-sided) that is the users an equal candidate needs to PASS
    with that probability; two-sided, the users a comparison needs to detect a difference of m.

    >>> Plan.of(sd=0.23, margin=0.01, sided="two").n_queries
    4154
    """

    n_queries: int | None
    sd: float
    margin: float
    alpha: float = 0.05
    power: float = DEFAULT_POWER
    sided: str = "one"
    source: str = "given"
    n_now: int | None = None
    power_now: float | None = None
    mde_now: float | None = None
    method: str = T_TEST  # the test planned for: the paired t-test, or the gate's bootstrap over users (BOOTSTRAP)
    # an sd estimated from the n_now users of a pilot is itself uncertain: its one-sided upper confidence limit at
    # SD_CONFIDENCE (chi-square, n_now - 1 df), and the users planned with it; a plan from that limit reaches the
    # power with probability at least SD_CONFIDENCE over pilots (Browne 1995, on pilot samples for sample sizes)
    sd_upper: float | None = None
    n_queries_upper: int | None = None
    # a one-sided plan on a measure with a known range: the users bound: auto needs (the bound that decides at that
    # many users: the betting bound, or t from t_from users on, release.min_affected), and which bound that is
    n_auto: int | None = None
    auto_by: str = ""
    t_from: int | None = None
    min_affected: float | None = None
    judge_queries: int | None = None  # a judged dataset (method PPI): n_queries are people's, of these the judge labels

    def with_auto(self, excess_range: tuple[float, float], min_affected: float | None) -> Plan:
        """The plan with what ``bound: auto`` needs for a ``max_drop`` guard at this margin whose users' drops beyond
        it lie in ``excess_range`` (:func:`~harness.decision.guard.excess_range`), an equal candidate's being -margin.

        >>> plan = Plan.of(sd=0.05, margin=0.01).with_auto((-1.01, 0.99), 0.01)   # AP, in [0, 1]
        >>> plan.n_queries, plan.n_auto, plan.auto_by
        (156, 528, 't')
        """
        if self.sided != "one" or self.method != T_TEST:
            return self
        low, high = excess_range
        found = bounds.auto_sample_size(self.n_queries, self.margin, self.sd, low, high, self.alpha, self.power, min_affected)
        t_from = None if found.t_from == sys.maxsize else found.t_from
        return dataclasses.replace(self, n_auto=found.needed, auto_by=found.by or "", t_from=t_from, min_affected=min_affected)

    @classmethod
    def of(
        cls,
        sd: float,
        margin: float,
        alpha: float = 0.05,
        target: float = 0.8,
        sided: Sided = "one",
        source: str = "given",
        n_now: int | None = None,
    ) -> Plan:
        if not math.isfinite(sd) or sd < 0:
            raise HarnessError(f"the standard deviation must be a finite number >= 0, got {sd}", hint="--sd 0.23")
        if not math.isfinite(margin) or margin <= 0:
            raise HarnessError(f"the margin must be a number above 0, got {margin}", hint="--margin 0.01")
        if not 0 < alpha < 1 or not 0 < target < 1:
            raise HarnessError("alpha and power must lie between 0 and 1", hint="--alpha 0.05 --power 0.8")
        n = power.sample_size(margin, sd, alpha, target, sided)
        now: dict[str, Any] = (
            {}
            if n_now is None
            else {
                "n_now": n_now,
                "power_now": power.power(n_now, margin, sd, alpha, sided),
                "mde_now": power.minimum_detectable_effect(n_now, sd, alpha, target, sided),
            }
        )
        if n_now is not None and n_now > 1 and sd > 0:
            upper = power.sd_upper_limit(sd, n_now, SD_CONFIDENCE)
            now |= {"sd_upper": upper, "n_queries_upper": power.sample_size(margin, upper, alpha, target, sided)}
        return cls(n, sd, margin, alpha, target, sided, source, **now)  # type: ignore[arg-type]

    @classmethod
    def resampled(
        cls, guard: GuardResult, margin: float, alpha: float = 0.05, target: float = 0.8, source: str = "the gate"
    ) -> Plan:
        """What the gate plans for a guard on a measure with one value per run (decided by the bootstrap over users):
        the users that bring the normal bound's half-width ``(z_alpha + z_power) se`` down to ``margin``, with the
        guard's own bootstrap sd; the gate's "users needed" for that margin, to the user.

        >>> g = GuardResult("REO@10", "INCONCLUSIVE", "", "REO@10", "d", "all", sd=0.5, n_queries=100)
        >>> Plan.resampled(g, 0.1).n_queries
        155
        """
        if guard.sd is None or not guard.n_queries or not math.isfinite(guard.sd):
            raise HarnessError(
                f"the gate's guard on {guard.measure} has no bootstrap sd to plan from",
                hint="a guard that was evaluated has one: check the dataset and segment",
            )
        if not math.isfinite(margin) or margin <= 0:
            raise HarnessError(f"the margin must be a number above 0, got {margin}", hint="--margin 0.01")
        n, se = guard.n_queries, guard.sd / math.sqrt(guard.n_queries)
        mde, needed = power.bootstrap_plan(n, se, margin, alpha, target)
        power_now = power.bootstrap_power(margin, se, alpha)
        return cls(needed, guard.sd, margin, alpha, target, "one", source, n, power_now, mde, BOOTSTRAP)

    @classmethod
    def judged(cls, found: PeoplePlan, margin: float, alpha: float, target: float, sided: Sided, source: str) -> Plan:
        """A judged dataset's plan (:func:`~harness.stats.ppi.people_plan`): the queries people would judge, the judge
        labelling every query, for the prediction-powered t to resolve ``margin``; ``sd`` is people's residual sd.

        >>> import numpy as np
        >>> from harness.stats.ppi import people_plan
        >>> y = np.array([0.1, 0.3, 0.2, 0.5]); f = np.concatenate([y + 0.05] * 3)
        >>> Plan.judged(people_plan(y, f, np.arange(12) < 4, 0.3, 0.05, 0.8), 0.3, 0.05, 0.8, "one", "given").n_queries
        3
        """
        return cls(
            found.needed,
            found.residual_sd,
            margin,
            alpha,
            target,
            sided,
            source,
            found.n,
            found.power_now,
            found.mde_now,
            PPI,
            judge_queries=found.total,
        )

    def __repr__(self) -> str:
        return f"Plan({self.line()})"

    def _repr_html_(self) -> str:
        """A notebook's view: the plan's sentence."""
        return f"<p>{escape(self.line())}</p>"

    def line(self) -> str:
        if self.method == PPI:
            return self._judged_text()
        if self.method == BOOTSTRAP:  # Plan.resampled: the gate's bound on a measure with one value per run
            needed = f"{self.n_queries:,} users" if self.n_queries else "any number of users"
            test, spread = "the gate's bootstrap bound", "the per-user sd is"
        else:
            needed = f"{self.n_queries:,} users" if self.n_queries else "more than 10^9 users"
            test = "a one-sided paired t-test (a max_drop guard)" if self.sided == "one" else "a two-sided paired t-test"
            spread = "the per-user differences have sd"
        text = (
            f"{needed}: {test} at alpha {self.alpha:g} has {self.power:.0%} power to resolve a true distance of "
            f"{self.margin:g} when {spread} {self.sd:.4f} ({self.source})"
        )
        if self.n_now is not None:
            text += (
                f". With the {self.n_now:,} users there: power {self.power_now:.0%}, minimum detectable effect {self.mde_now:.4f}"
            )
        if self.auto_by:
            text += ". " + self._auto_text()
        elif self.method != BOOTSTRAP and self.sided == "one":
            text += (
                ". This is the t-test's plan; a guard's own users needed (gate.json's n_needed) are planned for the "
                "bound that decides it, which under bound: auto can be the betting bound (release.min_affected)"
            )
        if self.sd_upper is not None:
            upper = f"{self.n_queries_upper:,} users" if self.n_queries_upper else "more than 10^9 users"
            text += (
                f". That sd is estimated from {self.n_now:,} users: at its one-sided {SD_CONFIDENCE:.0%} upper "
                f"confidence limit, {self.sd_upper:.4f}, the plan is {upper}, which reaches {self.power:.0%} power "
                f"in at least {SD_CONFIDENCE:.0%} of such estimates"
            )
        return text

    def _judged_text(self) -> str:
        """A judged dataset's plan in words: people's queries, the judge labelling all of them."""
        needed = (
            f"{self.n_queries:,} queries judged by people"
            if self.n_queries
            else f"more than all {self.judge_queries:,} queries judged by people"
        )
        test = "a one-sided" if self.sided == "one" else "a two-sided"
        return (
            f"{needed}, the judge labelling all {self.judge_queries:,}: {test} prediction-powered t at alpha "
            f"{self.alpha:g} has {self.power:.0%} power to resolve a true distance of {self.margin:g} when people's "
            f"residuals from the judge's values have sd {self.sd:.4f} ({self.source}). With the {self.n_now:,} judged by "
            f"people now: power {self.power_now:.0%}, minimum detectable effect {self.mde_now:.4f}"
        )

    def _auto_text(self) -> str:
        """Which plan a guard under ``bound: auto`` follows, where that is not the t-test's alone."""
        rule = f"release.min_affected {self.min_affected:g}" if self.min_affected is not None else "no release.min_affected"
        users = f"{self.n_auto:,} users"
        if self.auto_by == "betting":
            when = (
                f"t never decides a measure with a known range ({rule}): the exact betting bound does"
                if self.t_from is None
                else f"t decides only from {self.t_from:,} users on ({rule}), and below that the exact betting bound does"
            )
            return f"Under bound: auto {when}: the gate's plan is {users}, approximately, for the betting bound"
        if self.n_auto == self.n_queries:
            return f"Under bound: auto t decides from {self.t_from:,} users on ({rule}): the gate's plan is the same"
        return (
            f"Under bound: auto t decides from {self.t_from:,} users on ({rule}), and the betting bound would need more: "
            f"the gate's plan is {users}, by t"
        )

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        if out["judge_queries"] is None:  # a judged dataset's plan only
            del out["judge_queries"]
        return out


__all__ = ["SD_CONFIDENCE", "Plan"]
