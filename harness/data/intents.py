"""Subtopic judgments laid over aligned lists: each ranked and each judged document's subtopics as a bit mask.

>>> import numpy as np, pyarrow as pa
>>> from harness.data.model import Intents
>>> intents = Intents.from_records([("q1", "1", "a", 1), ("q1", "2", "a", 1), ("q1", "2", "b", 0), ("q1", "3", "c", 2)])
>>> data = intent_data(intents, np.array(["q1"]), pa.array(["c", "b", "a"]), np.array([3]), pa.array(["a", "b", "c"]),
...                    np.array([3]))
>>> data.row_mask.tolist(), data.n_subtopics.tolist()   # a: subtopics 1, 2 (bits 0, 1); c: 3; b: none
([4, 0, 3], [3])
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from harness.data._arrow import contiguous, positions_in, to_numpy
from harness.data.model import Intents
from harness.errors import InputFormatError
from harness.kernels.intent import MAX_SUBTOPICS, IntentData

_SEPARATOR = "\x1f"  # ids never hold control characters (the readers refuse them): a safe key separator


def _keys(queries: pa.Array, docs: pa.Array) -> pa.Array:
    joined = pc.binary_join_element_wise(queries, docs, _SEPARATOR)
    return contiguous(joined)


def _subtopic_order(subtopic: str) -> tuple[int, int | str]:
    """Numbers in numeric order (ndeval's subtopics are numbers), then other names in byte order."""
    return (0, int(subtopic)) if subtopic.isdigit() else (1, subtopic)


def intent_data(
    intents: Intents,
    query_ids: np.ndarray,
    row_docs: pa.Array,
    row_counts: np.ndarray,
    judged_docs: pa.Array,
    judged_counts: np.ndarray,
) -> IntentData:
    """The masks of the lists of ``query_ids``: their ranked documents (``row_counts`` a query, in order) and their
    judged documents (``judged_counts`` a query, as the lists lay them out)."""
    relevant = intents.judgment >= 1  # ndeval: any judgment of 1 or more is relevant, to that subtopic
    query = intents.query_id.filter(pa.array(relevant))
    subtopic = intents.subtopic.filter(pa.array(relevant))
    doc = intents.doc_id.filter(pa.array(relevant))
    bit_of: dict[tuple[str, str], int] = {}
    by_query: dict[str, list[str]] = {}
    for q, s in sorted(set(zip(query.to_pylist(), subtopic.to_pylist(), strict=True))):
        by_query.setdefault(q, []).append(s)
    for q, names in by_query.items():
        if len(names) > MAX_SUBTOPICS:
            raise InputFormatError(
                f"query {q!r} has {len(names)} subtopics with a relevant document; harness handles at most {MAX_SUBTOPICS}",
                path=intents.source,
                hint="split the query, or merge subtopics",
            )
        for bit, name in enumerate(sorted(names, key=_subtopic_order)):
            bit_of[(q, name)] = bit
    bits = np.array([1 << bit_of[(q, s)] for q, s in zip(query.to_pylist(), subtopic.to_pylist(), strict=True)], dtype=np.int64)
    pairs = _keys(query, doc)
    encoded = pc.dictionary_encode(pairs)
    codes = to_numpy(encoded.indices).astype(np.int64)
    masks = np.zeros(len(encoded.dictionary), dtype=np.int64)
    np.bitwise_or.at(masks, codes, bits)
    distinct: pa.Array = encoded.dictionary

    def lookup(queries: np.ndarray, counts: np.ndarray, docs: pa.Array) -> np.ndarray:
        per_row = pa.array(np.repeat(queries.astype(str), counts), pa.string())
        at = positions_in(_keys(per_row, docs), distinct)
        return np.where(at >= 0, masks[np.maximum(at, 0)], 0)

    judged_mask = lookup(query_ids, judged_counts, judged_docs)
    s_per_query = np.array([len(by_query.get(str(q), ())) for q in query_ids], dtype=np.int64)
    order = np.empty(len(judged_docs), dtype=np.int64)
    order[to_numpy(pc.sort_indices(judged_docs))] = np.arange(len(judged_docs))
    return IntentData(lookup(query_ids, row_counts, row_docs), judged_mask, order, s_per_query)
