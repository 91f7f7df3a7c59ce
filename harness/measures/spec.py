"""``Measure``: a frozen, hashable value with one canonical string.

>>> m = Measure("P", (("rel", 2),), 5)
>>> str(m)
'P(rel=2)@5'
>>> str(Measure("nDCG", (("gains", ((0.0, 0.0), (1.0, 1.0), (2.0, 3.0))),), 10))
'nDCG(gains={0:0,1:1,2:3})@10'
>>> Measure("nDCG", cutoff=10).mlflow_key()
'ndcg_at_10'
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

ParamValue = int | float | str | tuple[float, ...] | tuple[tuple[float, float], ...]


def format_number(value: float) -> str:
    """Shortest faithful text: 3.0 -> '3', 0.25 -> '0.25'."""
    if isinstance(value, bool):
        return str(value)
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def format_param(value: ParamValue) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, tuple):
        if value and isinstance(value[0], tuple):
            pairs = ",".join(f"{format_number(k)}:{format_number(v)}" for k, v in value)
            return "{" + pairs + "}"
        return "(" + ",".join(format_number(v) for v in value) + ("," if len(value) == 1 else "") + ")"  # type: ignore[arg-type]
    return format_number(value)


@dataclass(frozen=True, order=True)
class Measure:
    """A measure with its parameters (non-default only, sorted by name) and cutoff.

    Made by :func:`harness.parse_measure` from its name; its text is its canonical name.

    Parameters
    ----------
    name : str
        The registry's name (``nDCG``, ``P``, ``AP``, ``Gini``...).
    params : tuple of (str, value) pairs
        Its parameters other than their defaults, sorted by name.
    cutoff : int, optional
        Its @k.

    Examples
    --------
    >>> str(Measure("nDCG", cutoff=10)), str(Measure("P", (("rel", 2),), 5))
    ('nDCG@10', 'P(rel=2)@5')
    """

    name: str
    params: tuple[tuple[str, ParamValue], ...] = ()
    cutoff: int | None = None

    def __str__(self) -> str:
        text = self.name
        if self.params:
            text += "(" + ",".join(f"{k}={format_param(v)}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        return text

    def param(self, key: str, default: ParamValue | None = None) -> ParamValue | None:
        for name, value in self.params:
            if name == key:
                return value
        return default

    def mlflow_key(self) -> str:
        """A metric key MLflow accepts: lower case, ``@k`` -> ``_at_k``, params spelt out.

        Deterministic and collision-free for distinct measures: parameter values are
        written out in full, with ``-`` for minus signs and ``p`` for decimal points.
        """
        key = self.name.lower()
        for name, value in self.params:
            text = format_param(value)
            text = text.replace("{", "").replace("}", "").replace("(", "").replace(")", "").replace("'", "")
            text = text.replace("-", "m").replace(".", "p").replace(":", "-").replace(",", "_")
            key += f"_{name}_{text}"
        if self.cutoff is not None:
            key += f"_at_{self.cutoff}"
        return re.sub(r"[^a-z0-9_\-]", "_", key)


def deepest_cutoff(measures: Iterable[Measure]) -> int | None:
    """The largest cutoff among ``measures``; None when one is uncut (it reads whole lists) or there are none.

    >>> deepest_cutoff([Measure("ILD", cutoff=10), Measure("ILD", cutoff=100)]), deepest_cutoff([Measure("ILD")])
    (100, None)
    """
    cutoffs = [m.cutoff for m in measures]
    return None if not cutoffs or None in cutoffs else max(c for c in cutoffs if c is not None)
