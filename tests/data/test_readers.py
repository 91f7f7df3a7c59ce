"""Readers: every format gives the same values; bad input names the file, the line and the fix."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness import aggregate, evaluate
from harness.cli import main
from harness.data.tables import read_table_qrels, read_table_run
from harness.data.trec import read_qrels, read_run
from harness.errors import InputFormatError

QRELS = [("u1", "007", 5), ("u1", "i2", 3), ("u2", "i3", 4), ("u2", "i4", 1)]
RUN = [("u1", "i2", 0.9), ("u1", "007", 0.8), ("u1", "i9", 0.7), ("u2", "i3", 0.5), ("u2", "i4", 0.6)]
MEASURES = ["nDCG@3", "P(rel=4)@2", "RR"]


def _expected() -> dict[str, float]:
    qrels = read_qrels_from(QRELS)
    run = read_run_from(RUN)
    return {str(m): v for m, v in aggregate(evaluate(qrels, run, MEASURES)).items()}


def read_qrels_from(rows):  # type: ignore[no-untyped-def]
    from harness import Qrels

    return Qrels.from_records(rows)


def read_run_from(rows):  # type: ignore[no-untyped-def]
    from harness import Run

    return Run.from_records(rows)


@pytest.mark.parametrize("fmt", ["csv", "tsv", "parquet", "jsonl"])
def test_tables_match_records(tmp_path: Path, fmt: str) -> None:
    qrels = pd.DataFrame(QRELS, columns=["user", "item", "rating"])
    run = pd.DataFrame(RUN, columns=["user", "item", "score"])
    paths = {}
    for name, frame in (("qrels", qrels), ("run", run)):
        path = tmp_path / f"{name}.{fmt}"
        if fmt == "csv":
            frame.to_csv(path, index=False)
        elif fmt == "tsv":
            frame.to_csv(path, index=False, sep="\t")
        elif fmt == "parquet":
            frame.to_parquet(path, index=False)
        else:
            frame.to_json(path, orient="records", lines=True)
        paths[name] = path
    q = read_table_qrels(paths["qrels"], {"query": "user", "doc": "item", "relevance": "rating"})
    r = read_table_run(paths["run"], {"query": "user", "doc": "item", "score": "score"})
    assert q.doc_id.to_pylist()[0] == "007"  # ids stay strings: no lost leading zeros
    got = {str(m): v for m, v in aggregate(evaluate(q, r, MEASURES)).items()}
    assert got == pytest.approx(_expected())


def test_gzipped_and_commented_trec_files(tmp_path: Path) -> None:
    qrels = "".join(f"{q} 0 {d} {r}\n" for q, d, r in QRELS)
    run = "".join(f"{q} Q0 {d} 0 {s} sys\n" for q, d, s in RUN)
    with gzip.open(tmp_path / "qrels.gz", "wt") as f:
        f.write("# judged in 2026\n" + qrels)
    with gzip.open(tmp_path / "run.gz", "wt") as f:
        f.write(run)
    (tmp_path / "spaced.run").write_text(run.replace(" ", "   "))  # several spaces: the careful reader
    got = {
        str(m): v
        for m, v in aggregate(evaluate(read_qrels(tmp_path / "qrels.gz"), read_run(tmp_path / "run.gz"), MEASURES)).items()
    }
    assert got == pytest.approx(_expected())
    spaced = read_run(tmp_path / "spaced.run")
    np.testing.assert_array_equal(spaced.score, [s for _, _, s in RUN])
    assert spaced.name == "sys"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("u1 0 d1\n", r"qrels: line 1: expected 4 columns \(qid iter docid rel\), got 3\. Fix: each qrels line is"),
        ("u1 0 d1 1\nu1 0 d2 high\n", r"qrels: line 2: relevance 'high' is not a number\. Fix:"),
        ("# only a comment\n", r"qrels: no judgments in the file\. Fix:"),
    ],
)
def test_qrels_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "qrels"
    path.write_text(content)
    with pytest.raises(InputFormatError, match=message):
        read_qrels(path)


def test_not_utf8_and_missing_columns(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_bytes(b"q1 Q0 d\xff 1 1.0 x\n")
    with pytest.raises(InputFormatError, match=r"run: line 1: not UTF-8 text \(invalid start byte at byte 8 of the line\)"):
        read_run(path)
    table = tmp_path / "run.csv"
    table.write_text("user,item,score\nu1,i1,0.5\n")
    with pytest.raises(InputFormatError, match=r"run\.csv: line 1: no column 'uid' for the query \(columns: user, item, score\)"):
        read_table_run(table, {"query": "uid", "doc": "item", "score": "score"})
    table.write_text("user,item,score\nu1,i1,\n")
    with pytest.raises(InputFormatError, match=r"run\.csv: line 2: score missing or NaN in data row 1"):
        read_table_run(table, {"query": "user", "doc": "item", "score": "score"})


def test_cli_reads_tables_with_a_column_mapping(tmp_path: Path) -> None:
    pd.DataFrame(QRELS, columns=["user", "item", "rating"]).to_csv(tmp_path / "q.csv", index=False)
    pd.DataFrame(RUN, columns=["user", "item", "score"]).to_parquet(tmp_path / "r.parquet", index=False)
    out, err = io.StringIO(), io.StringIO()
    code = main(
        [
            "eval",
            "--qrels-columns",
            "query=user,doc=item,relevance=rating",
            "--run-columns",
            "query=user,doc=item",
            "-m",
            "RR",
            "--format",
            "csv",
            str(tmp_path / "q.csv"),
            str(tmp_path / "r.parquet"),
        ],
        out,
        err,
    )
    assert code == 0, err.getvalue()
    # labelled by the file's name; an ir_measures name prints as written (trec_eval's names print as trec_eval's)
    assert out.getvalue().splitlines()[-1] == f"r.parquet,all,RR,{_expected()['RR']}"


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("large", [False, True], ids=["string", "large_string"])
def test_drained_columns_equal_their_chunks_combined(seed: int, large: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader's chunk-by-chunk copy (drain_strings, drain_floats) gives Arrow's combine_chunks, sliced and
    empty chunks and empty strings included, and empties the list it is given."""
    import numpy as np
    import pyarrow as pa

    from harness.data import _arrow
    from harness.data._arrow import drain_floats, drain_strings

    if large:  # past int32 offsets (2 GiB of characters, here made small): large_string, int64 offsets
        monkeypatch.setattr(_arrow, "STRING_BYTES_MAX", 10)
    rng = np.random.default_rng(seed)
    words = ["", "a", "ünï", "d1234567", "q" * 40]
    chunks: list[pa.Array] = []
    for _ in range(rng.integers(1, 12)):
        values = [words[i] for i in rng.integers(0, len(words), rng.integers(0, 30))]
        chunk = pa.array([*values, "x", "yy"], pa.string())
        chunks.append(chunk.slice(int(rng.integers(0, 2)), len(values)))  # offsets that do not start at 0
    expected = pa.chunked_array(chunks, pa.string()).combine_chunks()
    taken = list(chunks)
    drained = drain_strings(taken)
    assert taken == [] and drained.to_pylist() == expected.to_pylist()
    characters = sum(len(v.encode()) for v in expected.to_pylist())
    assert drained.type == (pa.large_string() if large and characters > 10 else pa.string())
    numbers = [pa.array(rng.normal(size=int(rng.integers(0, 20)))) for _ in range(4)]
    expected_numbers = np.concatenate([n.to_numpy() for n in numbers])
    assert np.array_equal(drain_floats(list(numbers)), expected_numbers)


def test_check_ids_reads_only_the_ids_own_bytes(tmp_path: Path) -> None:
    """A NUL byte beyond an array's slice (or in its buffer's padding) is not one of its ids; one inside is named,
    with its line in the file the ids came from."""
    import pyarrow as pa

    from harness.data.trec import check_ids
    from harness.errors import InputFormatError

    ids = pa.array(["q1", "q\x002", "q3"])
    assert check_ids(ids.slice(0, 1), Path("run.txt"), "query").to_pylist() == ["q1"]
    assert check_ids(ids.slice(2, 1), Path("run.txt"), "query").to_pylist() == ["q3"]
    run = tmp_path / "run.txt"
    run.write_text("q\x002 Q0 d 1 1.0 t\nq3 Q0 d 1 1.0 t\n")  # the rows of the slice below, in order
    with pytest.raises(InputFormatError, match=r"run.txt: line 1: a control character \('\\x00'\) in a query id"):
        check_ids(ids.slice(1, 2), run, "query")


@pytest.mark.parametrize("character", ["\x00", "\x01", "\x1f", "\x7f", "\n", "\t"])
def test_control_characters_are_found_in_any_chunk_at_their_row(character: str) -> None:
    """Every C0 control character and DEL is found, in whichever chunk, at its row counted across chunks; printable
    text (accents, a non-breaking space, U+0085) is not flagged."""
    import pyarrow as pa

    from harness.data.model import control_character_row

    clean = ["d1", "café", "a\u00a0b", "x\u0085y"]
    assert control_character_row(pa.chunked_array([clean, clean])) is None
    ids = pa.chunked_array([clean, ["ok", f"d{character}2"]])
    assert control_character_row(ids) == (5, character)
    assert control_character_row(ids.combine_chunks().slice(5)) == (0, character)


def test_streaming_refuses_a_block_with_a_control_character(tmp_path: Path) -> None:
    """The Dask engine's streaming reader hands such a file to the whole-file reader, which names the line."""
    from harness.data.trec import read_run, stream_run
    from harness.errors import InputFormatError, NotStreamable

    run = tmp_path / "run.txt"
    run.write_bytes(b"q1 Q0 d1 1 1.0 t\nq1 Q0 d\x1b2 2 0.5 t\n")
    with pytest.raises(NotStreamable):
        list(stream_run(run))
    with pytest.raises(InputFormatError, match=r"line 2: a control character"):
        read_run(run)
