"""The input file formats, and the one a file's name implies.

>>> from pathlib import Path
>>> table_format_of(Path("train.tsv.gz")), table_format_of(Path("qrels.txt"))
('tsv', None)
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

Format = Literal["trec", "csv", "tsv", "parquet", "jsonl"]
TableFormat = Literal["csv", "tsv", "parquet", "jsonl"]
FORMATS: tuple[Format, ...] = ("trec", "csv", "tsv", "parquet", "jsonl")
TABLE_FORMATS: tuple[TableFormat, ...] = ("csv", "tsv", "parquet", "jsonl")
# judgments may also be subtopic judgments: ndeval's 'query subtopic doc judgment' lines (intent-aware measures)
QRELS_FORMATS: tuple[str, ...] = (*FORMATS, "ndeval")

_SUFFIXES: dict[str, TableFormat] = {
    "csv": "csv",
    "tsv": "tsv",
    "parquet": "parquet",
    "pq": "parquet",
    "jsonl": "jsonl",
    "ndjson": "jsonl",
}


def table_format_of(path: Path) -> TableFormat | None:
    """The table format implied by the file name (a trailing ``.gz`` ignored), or None for TREC text."""
    suffixes = [s.lower() for s in path.suffixes if s.lower() != ".gz"]
    ending = suffixes[-1].lstrip(".") if suffixes else ""
    return _SUFFIXES.get(ending)
