"""The compiled one-pass reader of plain TREC files (``harness.data._reader``) against Python's own reading of the same
lines (``str.split`` and ``float``, which the careful line-by-line reader uses) and against Arrow's CSV reader: the
same ids and the same numbers, bit for bit, however the file is cut over threads; and None (so that the readers which
name the line take over) for every file that is not plain."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.data import _reader as reader_module
from harness.data import _reader_kernels as kernels
from harness.data._reader import _line_starts, _Places, read_plain
from harness.data.model import QueryBlocks
from harness.data.trec import _fast_read, read_qrels, read_run
from harness.errors import InputFormatError

_DIGITS = st.text(alphabet="0123456789", min_size=1, max_size=24)


@st.composite
def decimals(draw: st.DrawFn) -> str:
    """Plain decimals: a sign, digits with a point anywhere (or none), an exponent; up to 24 digits."""
    sign = draw(st.sampled_from(["", "+", "-"]))
    whole = draw(st.one_of(st.just(""), _DIGITS))
    point = draw(st.sampled_from(["", "."]))
    fraction = draw(_DIGITS) if point else ""
    if not (whole or fraction):
        whole = "0"
    exponent = draw(st.one_of(st.just(""), st.integers(-330, 330).map(lambda e: f"{'eE'[e % 2]}{e:+d}")))
    return sign + whole + point + fraction + exponent


def _bits(values: list[float] | np.ndarray) -> list[int]:
    return [struct.unpack("<q", struct.pack("<d", v))[0] for v in values]


@settings(max_examples=3000, deadline=None)
@given(st.one_of(decimals(), st.floats(allow_nan=False, allow_infinity=False).map(repr)))
@example("9007199254740993")  # 2^53 + 1: past the fast path's exact integers
@example("0.1")
@example("1e22")
@example("1e23")  # the first power of ten that is not a double
@example("2.2250738585072014e-308")  # the smallest normal double
@example("1.7976931348623157e308")
@example("123456789012345678901234567890")
@example("-0")
@example("0.000000000000000000000000000001")
def test_numbers_are_read_as_python_reads_them(text: str) -> None:
    """Every plain decimal Python reads as a finite normal double is read to the same bits; the rest is refused."""
    got = kernels.parse_number(text.encode())
    expected = float(text)
    if got is None:  # refused: only out of range (overflow, underflow to zero or a subnormal)
        assert not np.isfinite(expected) or abs(expected) < 2.2250738585072014e-308
    else:
        assert _bits([got]) == _bits([expected]), text


@pytest.mark.parametrize(
    "text",
    [
        "",
        ".",
        "+",
        "-",
        "e5",
        "1e",
        "1e+",
        "1,5",
        "1_0",
        "0x10",
        "inf",
        "nan",
        "--1",
        "1..2",
        "1e5.5",
        "1e999",
        "1e-999",
        "١",
        "1 ",
    ],
)
def test_what_is_not_a_plain_decimal_is_refused(text: str) -> None:
    assert kernels.parse_number(text.encode()) is None


_ID_CHARS = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) != "#")


@st.composite
def plain_runs(draw: st.DrawFn) -> tuple[str, list[tuple[str, str, float]]]:
    """A plain run's text (separators of spaces and tabs, blank lines, CRLF, with or without a final line break) and
    the rows Python reads from it."""
    n = draw(st.integers(1, 60))
    ids = st.text(alphabet=_ID_CHARS, min_size=1, max_size=20)
    lines, rows = [], []
    crlf = draw(st.booleans())
    for _ in range(n):
        qid, doc, number = draw(ids), draw(ids), draw(st.one_of(decimals(), st.floats(-1e6, 1e6).map(repr)))
        value = float(number)
        underflow = value == 0 and any(c in "123456789" for c in number.lower().split("e")[0])
        if not np.isfinite(value) or underflow or 0 < abs(value) < 2.2250738585072014e-308:  # refused: see above
            number = "0.5"
        fields = [qid, "Q0", doc, str(draw(st.integers(0, 999))), number, draw(ids)]
        gaps = [draw(st.sampled_from([" ", "\t", "  ", " \t"])) for _ in range(5)]
        lead = draw(st.sampled_from(["", "", " ", "\t"]))
        lines.append(lead + "".join(f + g for f, g in zip(fields, [*gaps, ""], strict=True)))
        rows.append((qid, doc, float(number)))
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["", " ", "\t "])))
    ending = "\r\n" if crlf else "\n"
    text = ending.join(lines) + (ending if draw(st.booleans()) else "")
    return text, rows


@settings(max_examples=150, deadline=None)
@given(plain_runs(), st.integers(1, 5))
def test_plain_runs_are_read_as_python_splits_them(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[str, list[tuple[str, str, float]]], parts: int
) -> None:
    """Any plain run, cut into up to five parts: every row, in file order, ids and numbers to the bit."""
    text, rows = case
    path = tmp_path_factory.mktemp("plain") / "run.trec"
    path.write_bytes(text.encode())
    read = read_plain(path, 6, (0, 2), 4, parts=parts)
    assert read is not None
    qid, doc, score = read
    assert qid.to_pylist() == [r[0] for r in rows]
    assert doc.to_pylist() == [r[1] for r in rows]
    assert _bits(score) == _bits([r[2] for r in rows])
    blocks = read_plain(path, 6, (0, 2), 4, parts=parts, blocks=True)
    assert blocks is not None and isinstance(blocks[0], QueryBlocks)
    assert blocks[0].column().to_pylist() == [r[0] for r in rows] and blocks[1].to_pylist() == [r[1] for r in rows]


def test_a_large_run_over_threads_is_arrows_read(tmp_path: Path) -> None:
    """Four megabytes of an ordinary run, cut over the cores as read_run cuts it: Arrow's columns, bit for bit."""
    rng = random.Random(7)
    lines = [
        f"q{q} Q0 D{rng.randrange(10**7)} {r} {rng.uniform(-50, 50):.{rng.choice([3, 6, 17])}g} tag"
        for q in range(1000)
        for r in range(100)
    ]
    path = tmp_path / "run.trec"
    path.write_text("\n".join(lines) + "\n")
    types = {"qid": pa.string(), "docid": pa.string(), "score": pa.float64()}
    arrow = _fast_read(path, ("qid", "Q0", "docid", "rank", "score", "tag"), types)
    assert arrow is not None
    for parts in (None, 1, 3, 8):
        read = read_plain(path, 6, (0, 2), 4, parts=parts)
        assert read is not None
        assert read[0].equals(arrow["qid"].combine_chunks()) and read[1].equals(arrow["docid"].combine_chunks())
        assert _bits(read[2]) == _bits(arrow["score"].to_numpy())


@pytest.mark.parametrize(
    "text",
    [
        "# a comment\nq1 Q0 d1 1 1.0 t\n",
        "q1 Q0 d1 1 1.0 t\n#q1 Q0 d2 2 0.5 t\n",
        "q1 Q0 d1 1 1.0\n",  # five fields
        "q1 Q0 d1 1 1.0 t extra\n",  # seven
        "q1 Q0 d1 1 1,0 t\n",
        "q1 Q0 d1 1 nan t\n",
        "q1 Q0 d1 1 1e999 t\n",
        "q1 Q0 dé 1 1.0 t\n",  # past ASCII: Arrow checks the UTF-8
        "q1 Q0 d\x001 1 1.0 t\n",
        "q1 Q0 d1 1 1.0 t\x0b\n",
        "q1 Q0 d1\r 1 1.0 t\n",
        "q1 Q0 d\x7f 1 1.0 t\n",
        "",
        " \n\t\n",
    ],
    ids=[
        "comment-first",
        "comment-later",
        "5-fields",
        "7-fields",
        "comma",
        "nan",
        "overflow",
        "utf8",
        "nul",
        "vtab",
        "lone-cr",
        "del",
        "empty",
        "blank",
    ],
)
def test_what_is_not_plain_is_left_to_the_other_readers(tmp_path: Path, text: str) -> None:
    path = tmp_path / "run.trec"
    path.write_bytes(text.encode())
    assert read_plain(path, 6, (0, 2), 4) is None


def test_the_other_readers_still_read_and_name_the_line(tmp_path: Path) -> None:
    """A run the compiled reader leaves (a comment, a non-ASCII id) is still read; a bad line is still named."""
    path = tmp_path / "run.trec"
    path.write_text("# bm25\nq1 Q0 dé 1 2.0 t\nq1 Q0 d2 2 1.0 t\n", encoding="utf-8")
    run = read_run(path)
    assert run.doc_id.to_pylist() == ["dé", "d2"] and run.score.tolist() == [2.0, 1.0]
    path.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1,0 t\n")
    with pytest.raises(InputFormatError) as error:
        read_run(path)
    assert error.value.line == 2 and "'1,0' is not a number" in str(error.value)


def test_a_line_longer_than_the_readers_window_goes_to_arrow(tmp_path: Path) -> None:
    long_id = "d" * (1 << 21)
    path = tmp_path / "run.trec"
    path.write_text(f"q1 Q0 {long_id} 1 2.0 t\nq1 Q0 d2 2 1.0 t\n")
    assert read_plain(path, 6, (0, 2), 4) is None
    assert read_run(path).doc_id.to_pylist() == [long_id, "d2"]


def test_qrels_through_the_compiled_reader(tmp_path: Path) -> None:
    """Labels as qrels give them (negative, fractional); one a double cannot hold exactly goes to the careful reader."""
    path = tmp_path / "qrels"
    path.write_text("q1 0 d1 1\nq1 0 d2 -1\nq2\t0\td9\t0.5\n")
    qrels = read_qrels(path)
    assert qrels.query_id.to_pylist() == ["q1", "q1", "q2"] and qrels.relevance.tolist() == [1.0, -1.0, 0.5]
    path.write_text("q1 0 d1 1\nq1 0 d2 9007199254740993\n")
    with pytest.raises(InputFormatError) as error:
        read_qrels(path)
    assert error.value.line == 2


@pytest.mark.parametrize("wide", [False, True], ids=["int32", "int64"])
def test_both_offset_widths(tmp_path: Path, wide: bool) -> None:
    """The kernel writes int32 offsets, or int64 ones (ids past 2 GiB, large_string), to the same ends."""
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 d10 1 2.5 t\nq22 Q0 d3 2 1.5 t\n")
    width = np.int64 if wide else np.int32
    a_off, b_off = np.zeros(3, width), np.zeros(3, width)
    a_data, b_data, numbers, result = np.zeros(5, np.uint8), np.zeros(5, np.uint8), np.zeros(2), np.zeros(6, np.int64)
    size = path.stat().st_size
    kernels.read_part(
        str(path).encode(),
        0,
        size,
        6,
        0,
        2,
        4,
        a_off,
        a_data,
        b_off,
        b_data,
        numbers,
        0,
        2,
        0,
        5,
        0,
        5,
        False,
        np.zeros(1, np.int64),
        0,
        0,
        True,
        result,
    )
    assert result.tolist() == [kernels.OK, 2, 5, 5, 2, 0]
    assert a_off.tolist() == [0, 2, 5] and bytes(a_data) == b"q1q22" and b_off.tolist() == [0, 3, 5]
    assert numbers.tolist() == [2.5, 1.5]


@pytest.mark.parametrize("wide", [False, True], ids=["int32", "int64"])
def test_blocks_keep_one_id_per_run_of_equal_ids(tmp_path: Path, wide: bool) -> None:
    """With blocks, the first id field is one id and one start row per run of lines with equal ids: ``q1`` again
    after ``q22`` starts a block of its own, and an id that merely starts like the previous one (``q2`` after ``q22``)
    is another id."""
    path = tmp_path / "run.trec"
    path.write_text("q1 Q0 a 1 1 t\nq1 Q0 b 2 1 t\nq22 Q0 c 1 1 t\nq2 Q0 d 1 1 t\nq1 Q0 e 1 1 t\n")
    width = np.int64 if wide else np.int32
    a_off, b_off, starts = np.zeros(5, width), np.zeros(6, width), np.zeros(4, np.int64)
    a_data, b_data, numbers, result = np.zeros(9, np.uint8), np.zeros(5, np.uint8), np.zeros(5), np.zeros(6, np.int64)
    size = path.stat().st_size
    kernels.read_part(
        str(path).encode(),
        0,
        size,
        6,
        0,
        2,
        4,
        a_off,
        a_data,
        b_off,
        b_data,
        numbers,
        0,
        5,
        0,
        9,
        0,
        5,
        True,
        starts,
        0,
        4,
        True,
        result,
    )
    assert result.tolist() == [kernels.OK, 5, 9, 5, 5, 4]
    assert a_off.tolist() == [0, 2, 5, 7, 9] and bytes(a_data) == b"q1q22q2q1" and starts.tolist() == [0, 2, 3, 4]
    counted = np.zeros(6, np.int64)
    kernels.read_part(
        str(path).encode(),
        0,
        size,
        6,
        0,
        2,
        4,
        a_off,
        a_data,
        b_off,
        b_data,
        numbers,
        0,
        0,
        0,
        0,
        0,
        0,
        True,
        starts,
        0,
        0,
        False,
        counted,
    )
    assert counted.tolist() == result.tolist()


def test_blocks_across_the_cuts_between_parts_are_joined(tmp_path: Path) -> None:
    """A query whose lines straddle a cut between two cores' parts is one block, as in one part; whatever the parts,
    the blocks expand to the column the line-by-line reader gives."""
    lines = [f"q{i // 7} Q0 d{i} 1 {i}.5 t" for i in range(60)]
    path = tmp_path / "run.trec"
    path.write_text("\n".join(lines) + "\n")
    column = [line.split()[0] for line in lines]
    for parts in (1, 2, 3, 5, 8):
        blocks, _, _ = read_plain(path, 6, (0, 2), 4, parts=parts, blocks=True)
        assert blocks.ids.to_pylist() == [f"q{q}" for q in range(9)]
        assert blocks.column().to_pylist() == column


@pytest.mark.parametrize("blocks", [False, True])
def test_parts_placed_from_a_sample_and_parts_that_outgrow_their_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, blocks: bool
) -> None:
    """Each part after the first is written where the file's first bytes (SAMPLE) say it will start, and the gaps are
    then closed; where the lines after the sample are longer than it says (ids ten times as long in the file's middle),
    a part outgrows its place and the file is read again where exact counts place its parts. Both give the columns of
    one part read alone."""
    rng = random.Random(3)
    short = [f"q{i // 50} Q0 D{rng.randrange(100)} 1 {rng.uniform(0, 9):.3f} t" for i in range(3000)]
    long_ = [f"q{i // 50}{'x' * 30} Q0 D{rng.randrange(10**30)}{'y' * 40} 1 {rng.uniform(0, 9):.3f} t" for i in range(3000)]
    exact_counts = []
    original = _Places.from_counts
    monkeypatch.setattr(_Places, "from_counts", classmethod(lambda cls, *a: exact_counts.append(1) or original(*a)))
    monkeypatch.setattr(reader_module, "SAMPLE", 4096)  # a prefix of the first part, not all of it
    for name, lines, outgrown in (("even", short + short + short, False), ("uneven", short + long_ + short, True)):
        path = tmp_path / f"{name}.trec"
        path.write_text("\n".join(lines) + "\n")
        alone = read_plain(path, 6, (0, 2), 4, parts=1, blocks=blocks)
        exact_counts.clear()
        read = read_plain(path, 6, (0, 2), 4, parts=3, blocks=blocks)
        assert read is not None and alone is not None
        assert bool(exact_counts) == outgrown, name
        first, alone_first = (x.column() if blocks else x for x in (read[0], alone[0]))
        assert first.equals(alone_first) and read[1].equals(alone[1]) and _bits(read[2]) == _bits(alone[2])
        if blocks:
            assert read[0].starts.tolist() == alone[0].starts.tolist()


def test_line_starts_cut_at_line_breaks(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"aaaa\nbb\nc\n\ndddddddd\n")
    size = path.stat().st_size
    for parts in range(1, 8):
        cuts = _line_starts(path, size, parts)
        assert cuts[0] == 0 and cuts[-1] == size and cuts == sorted(set(cuts))
        assert all(path.read_bytes()[c - 1 : c] == b"\n" for c in cuts[1:-1])
