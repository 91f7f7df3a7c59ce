"""Expected exposure of a stochastic run, per query: EE-D, EE-R, EE-L (see :mod:`harness.kernels.exposure`).

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "qrels").write_text("q1 0 a 1\\nq1 1 b 0\\n")
>>> _ = (folder / "run").write_text("q1 0 a 1 1 r\\nq1 0 b 2 1 r\\nq1 1 b 1 1 r\\nq1 1 a 2 1 r\\n")
>>> evaluate_exposure(folder / "qrels", folder / "run", ExposureSettings(model="rbp")).round(4).to_dict("records")
[{'query_id': 'q1', 'EE-D': 1.125, 'EE-R': 0.75, 'EE-L': 0.625}]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from harness.data.trec import read_group_qrels, read_stochastic_run
from harness.errors import HarnessError
from harness.kernels import exposure


@dataclass(frozen=True)
class ExposureSettings:
    """How expected exposure is computed; the defaults are docs/measures.md's, expeval's differences named.

    model, p, u
        the user model: ``gerr`` (p = patience, u = the chance a relevant document satisfies) or ``rbp``.
    complete
        every judged document is in the target, not only the relevant ones (expeval -C).
    groups
        exposures summed per group (the qrels' second column) before the measures (expeval -G).
    normalized
        expeval's (x - lb) / (ub - lb) with its bounds, bugs included (by default raw, expeval -U).
    compat
        ``harness``: a query missing from the run has no exposure (EE-D 0, EE-R 0, EE-L = ‖ε*‖²); ``expeval``: its
        defaults there (EE-D's upper bound, EE-R's lower bound, EE-L = EE-R's upper bound) and inf for an all-zero
        exposure vector.
    """

    model: Literal["gerr", "rbp"] = "gerr"
    p: float = 0.5
    u: float = 0.5
    complete: bool = False
    groups: bool = False
    normalized: bool = False
    compat: Literal["harness", "expeval"] = "harness"

    def __post_init__(self) -> None:
        if self.model not in ("gerr", "rbp"):
            raise HarnessError(f"user model must be gerr or rbp, got {self.model!r}", hint="--model gerr")
        problem = exposure.user_model_problem(self.p, self.u)
        if problem is not None:
            raise HarnessError(problem, hint="expeval's defaults: p = 0.5, u = 0.5")
        if self.compat not in ("harness", "expeval"):
            raise HarnessError(f"compat must be harness or expeval, got {self.compat!r}", hint="--compat expeval")


def evaluate_exposure(qrels: str | Path, run: str | Path, settings: ExposureSettings | None = None) -> Any:
    """Per-query EE-D, EE-R, EE-L (a pandas DataFrame, one row per judged query with a relevant document; with
    ``complete``, as expeval -C, every judged query: its target spreads exposure over judged documents of grade 0)."""
    import pandas as pd

    s = settings or ExposureSettings()
    judged, groups = read_group_qrels(qrels, s.complete)
    rankings = read_stochastic_run(run)
    rows = []
    for query in sorted(judged):
        docs = judged[query]
        if not s.complete and not any(v > 0 for v in docs.values()):
            continue  # no relevant document: no target to approach (expeval keeps only rel > 0 lines without -C)
        values = exposure.query_values(
            docs,
            rankings.get(query),
            s.model,
            s.p,
            s.u,
            s.complete,
            s.normalized,
            s.compat == "expeval",
            groups[query] if s.groups else None,
        )
        rows.append({"query_id": query, **values})
    return pd.DataFrame(rows, columns=["query_id", "EE-D", "EE-R", "EE-L"])
