"""Alpha spending over a gate's planned looks: the same gate re-run as users accrue keeps its stated error.

A one-look guard tested at alpha errs with probability alpha at that look; a team that re-runs it daily and ships on
the first PASS takes that chance at every look (20 looks at a candidate exactly at its margin: false PASS about 0.21,
not 0.05). With ``release.looks: N`` the gate's alpha is spent over the N planned looks: look ``k`` tests its guards
at ``alpha_k = alpha (k/N)^3 - spent``, where ``spent`` is what the earlier looks of the same gate used (read from
their gate.json). By the union bound, the chance that any look errs is at most the sum of the levels it was tested
at, at most alpha, whatever the dependence between looks and whichever bound decides each. The cubic spending
(Lan and DeMets' power family with rho = 3, on the count of looks) keeps most of alpha for the later, larger looks,
where a decision is likely; a look beyond the plan has nothing left to spend.

>>> [round(look_level(0.05, k, 4, spent_before(0.05, k, 4)), 5) for k in (1, 2, 3, 4)]
[0.00078, 0.00547, 0.01484, 0.02891]
>>> round(sum(look_level(0.05, k, 4, spent_before(0.05, k, 4)) for k in (1, 2, 3, 4)), 12)
0.05
"""

from __future__ import annotations

from dataclasses import dataclass

SPENDING_POWER = 3  # rho in alpha (k / N)^rho
MAX_LOOKS = 10_000


@dataclass(frozen=True)
class Look:
    """Look ``number`` of a gate planned for ``planned`` looks, after earlier looks of it spent ``spent`` of alpha.

    >>> round(Look(2, 4, 0.00078125).level(0.05), 8)   # alpha (2/4)^3 less the first look's 0.05 (1/4)^3
    0.00546875
    """

    number: int = 1
    planned: int = 1
    spent: float = 0.0

    def level(self, alpha: float) -> float:
        """The level this look tests its guards at (:func:`look_level`)."""
        return look_level(alpha, self.number, self.planned, self.spent)


def spent_by(alpha: float, look: int, looks: int) -> float:
    """The alpha the plan has spent once look ``look`` of ``looks`` is done (0 before the first, alpha after the last)."""
    return alpha * min(max(look, 0) / looks, 1.0) ** SPENDING_POWER


def spent_before(alpha: float, look: int, looks: int) -> float:
    """What the plan's looks before ``look`` spent, had they all followed it."""
    return spent_by(alpha, look - 1, looks)


def look_level(alpha: float, look: int, looks: int, spent: float) -> float:
    """The level look ``look`` of ``looks`` tests its guards at: the plan's spending by then, less what the earlier
    looks of the gate actually spent (their levels; a one-look gate run before spent its whole alpha). 0 when nothing
    is left: the gate cannot decide at this look."""
    return max(0.0, spent_by(alpha, look, looks) - spent)
