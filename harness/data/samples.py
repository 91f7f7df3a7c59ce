"""A stochastic run's sampled rankings per query: what the expected-exposure measures read.

A stochastic run answers each query with several rankings (samples), its ``sample`` column saying
which ranking a row is in; a run without one has one ranking per query. The samples go in the
order of their ids; each ranking is ordered by score, ties as the conventions order them: by
document id descending (trec_eval), ascending (``docno_ascending``), or in file order (``input_order``).

>>> import pyarrow as pa
>>> from harness.data.model import Run
>>> run = Run.from_records([("q", "a", 1.0), ("q", "b", 2.0), ("q", "b", 1.0), ("q", "a", 2.0), ("r", "c", 1.0)])
>>> stochastic = Run(run.query_id, run.doc_id, run.score, sample=pa.array(["0", "0", "1", "1", "0"]))
>>> sample_rankings(stochastic, np.array(["q", "r", "s"], dtype=object))
({'0': ['b', 'a'], '1': ['a', 'b']}, {'0': ['c']}, {})
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.data._arrow import contiguous, positions_in, string_array, to_numpy
from harness.data.align import ranked_scores
from harness.data.model import Run
from harness.measures.conventions import Scores, Ties


def sample_rankings(
    run: Run, query_ids: np.ndarray, ties: Ties = Ties.TREC_EVAL, scores: Scores = Scores.FLOAT32
) -> tuple[dict[str, list[str]], ...]:
    """Per query of ``query_ids`` (in that order): {sample: its documents, best first}; {} for a query the run misses.
    Ranked as every run is (``ties``, ``scores``: :func:`harness.data.align.ranked_scores`)."""
    query = positions_in(contiguous(run.query_id), string_array([str(q) for q in query_ids.tolist()]))
    # samples in the order of their ids (byte order), not of the file: a query's value must not depend on row order
    sample, names = run.samples_by_id()
    docs = contiguous(run.doc_id)
    if ties is Ties.INPUT_ORDER:
        tie = np.arange(len(run))
    else:  # by document id: descending as trec_eval orders equal scores, ascending as pyndeval does
        rank = np.empty(len(run), dtype=np.int64)
        rank[to_numpy(pc.sort_indices(docs)).astype(np.int64)] = np.arange(len(run))
        tie = rank if ties is Ties.DOCNO_ASCENDING else -rank
    order = np.lexsort((tie, -ranked_scores(run.score, scores), sample, query))
    order = order[query[order] >= 0]  # rows of queries outside the evaluated ones
    ids = docs.take(pa.array(order)).to_pylist()
    out: list[dict[str, list[str]]] = [{} for _ in range(len(query_ids))]
    q, s = query[order], sample[order]
    starts = np.flatnonzero(np.r_[True, (q[1:] != q[:-1]) | (s[1:] != s[:-1])]) if order.size else np.zeros(0, np.int64)
    for begin, end in zip(starts.tolist(), [*starts[1:].tolist(), order.size], strict=True):
        out[int(q[begin])][names[int(s[begin])]] = ids[begin:end]
    return tuple(out)
