"""The parse floor: Arrow reading the qrels and the run's three used columns, and nothing else.

What any Python evaluator pays before computing anything (issue 12 measures harness against it).
"""

import sys

import pyarrow as pa
import pyarrow.csv as pacsv


def read(path: str, names: list[str], used: dict[str, pa.DataType]) -> pa.Table:
    return pacsv.read_csv(
        path,
        read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 22),
        parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False),
        convert_options=pacsv.ConvertOptions(column_types=used, include_columns=list(used)),
    )


qrels = read(sys.argv[1], ["qid", "iter", "docid", "rel"], {"qid": pa.string(), "docid": pa.string(), "rel": pa.float64()})
run = read(
    sys.argv[2], ["qid", "q0", "docid", "rank", "score", "tag"], {"qid": pa.string(), "docid": pa.string(), "score": pa.float64()}
)
print("rows", len(qrels), len(run))
