"""harness: an evaluation harness for ranking and recommender systems.

>>> from harness import Qrels, Run, evaluate, aggregate
>>> qrels = Qrels.from_records([("q1", "d1", 2), ("q1", "d2", 1)])
>>> run = Run.from_records([("q1", "d2", 0.9), ("q1", "d1", 0.5)])
>>> {str(m): round(v, 4) for m, v in aggregate(evaluate(qrels, run, ["nDCG@2", "RR"])).items()}
{'nDCG@2': 0.8597, 'RR': 1.0}
"""

from harness.conventions import Conventions
from harness.data.model import Qrels, Run
from harness.data.trec import read_qrels, read_run
from harness.evaluate import Evaluator, evaluate
from harness.measures.parse import parse_measure
from harness.measures.spec import Measure
from harness.results import PerQuery, aggregate

__version__ = "0.1.0"

__all__ = [
    "Conventions",
    "Evaluator",
    "Measure",
    "PerQuery",
    "Qrels",
    "Run",
    "__version__",
    "aggregate",
    "evaluate",
    "parse_measure",
    "read_qrels",
    "read_run",
]
