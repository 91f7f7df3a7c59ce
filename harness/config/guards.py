"""What a release guard may say, checked the same way for a YAML config and for ``harness.decide``.

A guard is one one-sided test with a stated margin, in the measure's direction
(``drop = production - candidate`` for a higher-is-better measure):

=================  ==========================================================================
``max_drop: m``     non-inferiority at margin m: PASS when the drop's one-sided upper bound is below m
``max_drop_pct: r`` the same, with the margin r% of production's value (tested exactly, as a ratio)
``min_gain: g``     superiority by g: PASS when the gain's one-sided lower bound is above g
=================  ==========================================================================

``descriptive: true`` turns a guard into a comparison of point estimates that is shown
but never decides the gate (no error rate can be stated for it). A guard on a catalogue
measure (Coverage, Gini, Entropy: functions of the distinct items recommended) must be
descriptive: resampling the users misstates its error (``aggregate`` ``catalogue``).

Earlier spellings are refused with the new one rather than silently reinterpreted:
``significant`` (a FAIL is now always "significantly worse than the margin") and
``non_inferiority: m`` (now ``max_drop: m``). A guard must state its margin.

>>> from harness.measures.spec import Measure
>>> guard_condition({"measure": "AP", "max_drop": 0.01}, Measure("AP"), "mean")
('max_drop', 0.01)
>>> try:
...     guard_condition({"measure": "AP", "non_inferiority": 0.01}, Measure("AP"), "mean")
... except GuardSpecError as exc:
...     print(exc.hint)
write max_drop: 0.01 (the same non-inferiority test at margin 0.01)
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from harness.config.schema import Condition, Guard, OnInconclusive
from harness.errors import GuardSpecError
from harness.measures.spec import Measure
from harness.stats.bounds import BOUND_CHOICES, BoundChoice
from harness.stats.looks import MAX_LOOKS

CONDITIONS: tuple[Condition, ...] = ("max_drop", "max_drop_pct", "min_gain")
ON_INCONCLUSIVE: tuple[OnInconclusive, ...] = ("inconclusive", "fail", "pass")
GUARD_KEYS = ("measure", "dataset", "segment", *CONDITIONS, "descriptive")
RETIRED = ("significant", "non_inferiority")


def guard_of(values: Mapping[str, object], measure: Measure, aggregate: str, line: int | None = None) -> Guard:
    """A guard as written, in a config or to ``harness.decide`` (its measure found by the caller, which also checks
    that its dataset and segment exist): its keys, its one condition and what it says; raises
    :class:`GuardSpecError` naming the key and the fix.

    >>> guard = guard_of({"measure": "AP", "segment": "new", "min_gain": 0.01}, Measure("AP"), "mean")
    >>> guard.condition, guard.threshold, guard.segment, guard.descriptive
    ('min_gain', 0.01, 'new', False)
    """
    unknown = sorted(set(values) - set(GUARD_KEYS) - set(RETIRED))
    if unknown:
        raise GuardSpecError(unknown[0], f"unknown key {unknown[0]!r}", f"valid keys: {', '.join(GUARD_KEYS)}")
    condition, threshold = guard_condition(values, measure, aggregate)
    names = {key: values.get(key) for key in ("dataset", "segment")}
    for key, name in names.items():
        if name is not None and not isinstance(name, str):
            raise GuardSpecError(key, f"{key} must be a name, got {name!r}", f"write {key}: NAME")
    return Guard(
        measure,
        condition,
        threshold,
        names["dataset"],  # type: ignore[arg-type]  # a name or None: checked above
        names["segment"],  # type: ignore[arg-type]
        descriptive=bool(values.get("descriptive", False)),
        line=line,
    )


def guard_condition(values: Mapping[str, object], measure: Measure, aggregate: str) -> tuple[Condition, float]:
    """The guard's one condition and its threshold; raises :class:`GuardSpecError` naming the key and the fix.

    ``aggregate``: how the measure is aggregated (``mean``, ``gmean``, ``sum``, ``count``,
    ``system`` for one value per run from sums over users, ``catalogue`` for one from the distinct items).
    """
    for key in RETIRED:
        if key in values:
            raise _retired(key, values)
    given = [key for key in CONDITIONS if values.get(key) is not None]
    if not given:
        raise GuardSpecError(
            "measure",
            f"the guard on {measure} states no margin",
            "add max_drop: 0.01 (PASS when shown not worse by 0.01), max_drop_pct: 1 (by 1% of production) "
            "or min_gain: 0.01 (PASS when shown better by 0.01)",
        )
    if len(given) > 1:
        raise GuardSpecError(
            given[1],
            f"the guard on {measure} states {' and '.join(given)}: a guard is one test",
            "write one guard per condition (the gate passes only when every guard passes)",
        )
    condition = given[0]
    raw = values[condition]
    if isinstance(raw, str) and raw.strip().endswith("%") and condition == "max_drop":
        number = raw.strip().removesuffix("%").strip()
        raise GuardSpecError(
            condition,
            f"max_drop must be a number in the measure's units, got {raw!r}",
            f"for {number}% of production's value write max_drop_pct: {number}; for an absolute drop, max_drop: 0.01",
        )
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(float(raw)):
        raise GuardSpecError(condition, f"{condition} must be a finite number, got {raw!r}", f"write {condition}: 0.01")
    threshold = float(raw)
    if threshold < 0:
        raise GuardSpecError(
            condition,
            f"{condition} must be 0 or more, got {threshold:g}",
            "a drop is counted in the measure's direction; write min_gain: x to require an improvement"
            if condition != "min_gain"
            else "write min_gain: 0 to require any significant improvement",
        )
    if condition == "max_drop_pct" and threshold >= 100:
        raise GuardSpecError(condition, f"max_drop_pct must be below 100, got {threshold:g}", "write max_drop_pct: 5")
    if aggregate == "gmean" and condition != "max_drop_pct":
        raise GuardSpecError(
            condition,
            f"{measure} is a geometric mean: its differences are tested as ratios, so a margin in its own units is undefined",
            f"write max_drop_pct: 1 (the candidate's {measure} at least 99% of production's)",
        )
    descriptive = values.get("descriptive", False)
    if not isinstance(descriptive, bool):
        raise GuardSpecError("descriptive", f"descriptive must be true or false, got {descriptive!r}", "write descriptive: true")
    if aggregate == "catalogue" and not descriptive:
        raise GuardSpecError(
            "measure",
            f"{measure} counts distinct items over the users, so no resampling of the users gives its error: the "
            "bootstrap's spread is about 0.55-0.79 of the true one and a guard at its margin PASSes 10-19% of the time "
            "where it promises 5%",
            f"write descriptive: true to show {measure} beside the gate, or guard a measure with a value per user "
            "(APLT@10, TailShare@10, Novelty@10 ...)",
        )
    return condition, threshold


def _retired(key: str, values: Mapping[str, object]) -> GuardSpecError:
    if key == "non_inferiority":
        margin = values.get("non_inferiority")
        return GuardSpecError(
            key,
            "'non_inferiority' was renamed: a guard is now a one-sided test with a stated margin",
            f"write max_drop: {margin} (the same non-inferiority test at margin {margin})",
        )
    return GuardSpecError(
        key,
        "'significant' was removed: every guard is now a one-sided test, and it FAILs only when the drop is "
        "significantly larger than its margin",
        "delete significant: and keep max_drop: m (PASS needs the drop shown below m; "
        "add descriptive: true for a check of the point estimates alone)",
    )


def release_power(value: float) -> float:
    """``release.power``: the power "users needed" plans for, in [0.5, 1)."""
    if not 0.5 <= value < 1:
        raise GuardSpecError("power", f"release.power must lie in [0.5, 1), got {value:g}", "write power: 0.8")
    return value


def release_looks(value: object) -> int:
    """``release.looks``: how many times the gate is planned to be run as users accrue (alpha is spent over them,
    :mod:`harness.stats.looks`); 1, the default, is one look."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LOOKS:
        raise GuardSpecError(
            "looks",
            f"release.looks must be a whole number from 1 to {MAX_LOOKS:,}, got {value!r}",
            "write looks: 20 (the gate is run at most 20 times as users accrue)",
        )
    return value


def release_bound(value: object) -> BoundChoice:
    """``release.bound``: how a guard on a mean is bounded (:mod:`harness.stats.bounds`)."""
    _one_of(
        "bound",
        value,
        BOUND_CHOICES,
        "write bound: auto (t where its normal approximation holds, the exact betting bound elsewhere)",
    )
    return value  # type: ignore[return-value]  # checked against BOUND_CHOICES above


def release_min_affected(value: object) -> float:
    """``release.min_affected``: the rarest harm, as a share of users in [0, 1), that ``bound: auto``'s t-test must not
    miss (:func:`harness.stats.bounds.t_trusted_from`)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise GuardSpecError("min_affected", f"min_affected must be a number, got {value!r}", "min_affected=0.01")
    value = float(value)
    if not 0 <= value < 1:
        raise GuardSpecError(
            "min_affected",
            f"release.min_affected must be a share of users in [0, 1), got {value:g}",
            "write min_affected: 0.01 (t decides only where a harm to 1% of users cannot all be missing from the sample)",
        )
    return value


def on_inconclusive(value: object) -> OnInconclusive:
    """``release.on_inconclusive``: what an INCONCLUSIVE gate exits as (its own code by default)."""
    _one_of(
        "on_inconclusive", value, ON_INCONCLUSIVE, "write on_inconclusive: fail (block the release until enough users decide it)"
    )
    return value  # type: ignore[return-value]  # checked against ON_INCONCLUSIVE above


def _one_of(key: str, value: object, choices: tuple[str, ...], hint: str) -> None:
    if value not in choices:
        raise GuardSpecError(key, f"release.{key} must be one of {', '.join(choices)}, got {value!r}", hint)
