"""harness: an evaluation harness for ranking and recommender systems.

>>> from harness import Qrels, Run, evaluate, aggregate
>>> qrels = Qrels.from_records([("q1", "d1", 2), ("q1", "d2", 1)])
>>> run = Run.from_records([("q1", "d2", 0.9), ("q1", "d1", 0.5)])
>>> {str(m): round(v, 4) for m, v in aggregate(evaluate(qrels, run, ["nDCG@2", "RR"])).items()}
{'nDCG@2': 0.8597, 'RR': 1.0}
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from harness._version import __version__

# Public names load their module on first use (PEP 562), so `harness --version` and
# `harness --help` start without importing numpy or pyarrow.
_LAZY = {
    "Conventions": "harness.measures.conventions",
    "Evaluator": "harness.evaluation.evaluator",
    "Measure": "harness.measures.spec",
    "PerQuery": "harness.evaluation.results",
    "Qrels": "harness.data.model",
    "Run": "harness.data.model",
    "aggregate": "harness.evaluation.results",
    "agree": "harness.api",
    "compare": "harness.api",
    "decide": "harness.api",
    "explain": "harness.api",
    "plan": "harness.api",
    "run_experiment": "harness.api",
    "evaluate": "harness.evaluation.evaluator",
    "parse_measure": "harness.measures.parse",
    "read_qrels": "harness.data.load",
    "read_run": "harness.data.load",
    "Interactions": "harness.data.items",
    "Catalog": "harness.data.items",
    "read_train": "harness.data.items",
    "read_items": "harness.data.items",
    "Intents": "harness.data.model",
    "read_subtopic_qrels": "harness.data.trec",
}

if TYPE_CHECKING:
    from harness.api import agree, compare, decide, explain, plan, run_experiment
    from harness.data.items import Catalog, Interactions, read_items, read_train
    from harness.data.load import read_qrels, read_run
    from harness.data.model import Intents, Qrels, Run
    from harness.data.trec import read_subtopic_qrels
    from harness.evaluation.evaluator import Evaluator, evaluate
    from harness.evaluation.results import PerQuery, aggregate
    from harness.measures.conventions import Conventions
    from harness.measures.parse import parse_measure
    from harness.measures.spec import Measure


def __dir__() -> list[str]:
    """The public names, for tab completion (they load on first use)."""
    return sorted(__all__)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'harness' has no attribute {name!r}")


__all__ = [
    "Catalog",
    "Conventions",
    "Evaluator",
    "Intents",
    "Interactions",
    "Measure",
    "PerQuery",
    "Qrels",
    "Run",
    "__version__",
    "aggregate",
    "agree",
    "compare",
    "decide",
    "evaluate",
    "explain",
    "parse_measure",
    "plan",
    "read_items",
    "read_qrels",
    "read_run",
    "read_subtopic_qrels",
    "read_train",
    "run_experiment",
]
