"""Columnar, immutable judgments and runs, as they come out of the readers.

Ids are always strings (Arrow string arrays: no Python object per row); relevance
labels and scores are float64. ``source`` names the file, for error messages.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments: one row per (query, document, label)."""

    query_id: pa.Array | pa.ChunkedArray
    doc_id: pa.Array | pa.ChunkedArray
    relevance: np.ndarray
    source: str = "<qrels>"

    def __len__(self) -> int:
        return len(self.relevance)

    @classmethod
    def from_records(cls, rows: list[tuple[str, str, float]], source: str = "<qrels>") -> Qrels:
        """Small qrels from Python tuples, e.g. for tests and the API.

        >>> len(Qrels.from_records([("q1", "d1", 2), ("q1", "d2", 0)]))
        2
        """
        return cls(
            query_id=pa.array([str(r[0]) for r in rows], pa.string()),
            doc_id=pa.array([str(r[1]) for r in rows], pa.string()),
            relevance=np.asarray([float(r[2]) for r in rows], dtype=np.float64),
            source=source,
        )


@dataclass(frozen=True, eq=False)
class Run:
    """A system's ranked lists: one row per (query, document, score); row order is file order."""

    query_id: pa.Array | pa.ChunkedArray
    doc_id: pa.Array | pa.ChunkedArray
    score: np.ndarray
    name: str = "run"
    source: str = "<run>"

    def __len__(self) -> int:
        return len(self.score)

    @classmethod
    def from_records(cls, rows: list[tuple[str, str, float]], name: str = "run", source: str = "<run>") -> Run:
        """Small runs from Python tuples.

        >>> len(Run.from_records([("q1", "d1", 2.0), ("q1", "d2", 1.0)]))
        2
        """
        return cls(
            query_id=pa.array([str(r[0]) for r in rows], pa.string()),
            doc_id=pa.array([str(r[1]) for r in rows], pa.string()),
            score=np.asarray([float(r[2]) for r in rows], dtype=np.float64),
            name=name,
            source=source,
        )
