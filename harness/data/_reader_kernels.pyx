# cython: language_level=3, cdivision=True
"""The compiled TREC reader (:mod:`harness.data._reader`): a part of a whitespace-separated file, read in one pass
into two string columns and one number column, built ahead of time (Cython over ``_reader_scan.h``).

A part is a range of whole lines. Its thread reads it in blocks with its own file handle,
splits each line on spaces and tabs, copies the two id fields straight into Arrow's string
layout (offsets into one byte buffer) and parses the number field. Anything outside the
plain form (a comment, a field count other than the format's, a byte outside printable
ASCII, a number that is not a plain decimal or overflows) stops the part with a status:
the caller then reads the file with the readers that name the line and the fix.

Numbers are correctly rounded, as Arrow's and Python's readers are: a decimal with at most
19 significant digits and a power of ten within 10^22 of its digits (Clinger's fast path:
one exact integer, one correctly rounded product or quotient), else the C library's
``strtod`` on the field alone, its end and range checked.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdio cimport FILE, fclose, fopen, fread
from libc.stdlib cimport free, malloc
from libc.string cimport memmove


cdef extern from *:
    """
    #include <stdio.h>
    #if defined(_WIN32)
    static int harness_seek(FILE *f, long long at) { return _fseeki64(f, at, SEEK_SET); }
    #else
    #include <sys/types.h>
    static int harness_seek(FILE *f, long long at) { return fseeko(f, (off_t)at, SEEK_SET); }
    #endif
    """
    int harness_seek(FILE *f, long long at) nogil


cdef extern from "_reader_scan.h" nogil:
    enum:
        SCAN_OK
        SCAN_NOT_OPENED
        SCAN_NOT_PLAIN
        SCAN_FIELD_COUNT
        SCAN_NOT_A_NUMBER
        SCAN_TOO_LONG
        SCAN_FULL
        SCAN_PADDING
    ctypedef struct harness_scan:
        int n_fields, field_a, field_b, field_number, fill, wide, blocks
        void *a_offsets
        void *b_offsets
        uint8_t *a_data
        uint8_t *b_data
        double *numbers
        int64_t *starts
        int64_t row, row_limit, a_at, a_limit, b_at, b_limit, block, block_limit, lines
        int status, last_length
    void harness_scan_lines(harness_scan *s, const uint8_t *buf, int64_t n)
    int harness_parse_number(const uint8_t *p, int64_t n, double *out)

ctypedef fused offset_t:
    int32_t
    int64_t

# what a part's status says (0: read whole)
OK, NOT_OPENED, NOT_PLAIN, FIELD_COUNT, NOT_A_NUMBER, TOO_LONG, FULL = (
    SCAN_OK, SCAN_NOT_OPENED, SCAN_NOT_PLAIN, SCAN_FIELD_COUNT, SCAN_NOT_A_NUMBER, SCAN_TOO_LONG, SCAN_FULL)

cdef int64_t BLOCK = 1 << 20  # bytes read at a time
cdef int64_t LONGEST_LINE = 1 << 20  # a longer line stops the part (TOO_LONG)


cdef int check_room(bint fill, bint blocks, Py_ssize_t a_offsets, Py_ssize_t a_data, Py_ssize_t b_offsets,
                    Py_ssize_t b_data, Py_ssize_t numbers, Py_ssize_t starts, Py_ssize_t result, int64_t start,
                    int64_t stop, int64_t first_row, int64_t row_limit, int64_t a_start, int64_t a_limit,
                    int64_t b_start, int64_t b_limit, int64_t first_block, int64_t block_limit) except -1:
    """The columns (their lengths given) hold every place :func:`read_part` may write: the scanner stops at the
    limits, so the limits must lie within the columns (a part's rows, bytes and blocks); a count writes nothing."""
    if result < 6 or min(a_offsets, a_data, b_offsets, b_data, numbers, starts) < 1:
        raise ValueError("read_part: the result needs 6 places and every column at least one")
    if start < 0 or stop < start:
        raise ValueError(f"read_part: bytes {start}..{stop}")
    if not fill:
        return 0
    if not (0 <= first_row <= row_limit and 0 <= a_start <= a_limit and 0 <= b_start <= b_limit
            and 0 <= first_block <= block_limit):
        raise ValueError(f"read_part: rows {first_row}..{row_limit}, bytes {a_start}..{a_limit} and {b_start}..{b_limit}, "
                         f"blocks {first_block}..{block_limit}")
    if a_offsets < (block_limit if blocks else row_limit) + 1 or b_offsets < row_limit + 1 or numbers < row_limit:
        raise ValueError(f"read_part: rows up to {row_limit} (blocks up to {block_limit}) in columns of {a_offsets} and "
                         f"{b_offsets} offsets and {numbers} numbers")
    if a_data < a_limit or b_data < b_limit or (blocks and starts < block_limit):
        raise ValueError(f"read_part: bytes up to {a_limit} and {b_limit} in columns of {a_data} and {b_data}, blocks up "
                         f"to {block_limit} in {starts} starts")
    return 0


def read_part(bytes path, int64_t start, int64_t stop, int n_fields, int field_a, int field_b, int field_number,
              offset_t[::1] a_offsets, uint8_t[::1] a_data, offset_t[::1] b_offsets, uint8_t[::1] b_data,
              double[::1] numbers, int64_t first_row, int64_t row_limit, int64_t a_start, int64_t a_limit,
              int64_t b_start, int64_t b_limit, bint blocks, int64_t[::1] starts, int64_t first_block,
              int64_t block_limit, bint fill, int64_t[::1] result):
    """Read the lines in bytes ``start .. stop`` of ``path`` (both at line starts, or stop at the end) into the columns:
    rows ``first_row .. row_limit`` (offsets to ``row_limit`` itself), bytes ``a_start .. a_limit`` and ``b_start ..
    b_limit``. ``result``: (status, rows, a's bytes, b's bytes, the part's lines read, blocks).

    With ``blocks``, field a is kept as blocks ``first_block .. block_limit``: each run of lines with equal ids one
    id (``a_offsets`` indexed by block) and its first row (``starts``); the part's first line starts a block.

    Without ``fill``, only count: the rows, blocks and id fields' bytes of a plain part, what the columns need room for
    (the columns are not touched, and the numbers are not read).
    """
    check_room(fill, blocks, a_offsets.shape[0], a_data.shape[0], b_offsets.shape[0], b_data.shape[0], numbers.shape[0],
               starts.shape[0], result.shape[0], start, stop, first_row, row_limit, a_start, a_limit, b_start, b_limit,
               first_block, block_limit)
    cdef const char *name = path
    cdef FILE *handle = NULL
    cdef uint8_t *buffer = NULL
    cdef int64_t size = 0, begin = 0, got, wanted, last, offset = start
    cdef bint done = False
    cdef harness_scan scan
    scan.n_fields, scan.field_a, scan.field_b, scan.field_number = n_fields, field_a, field_b, field_number
    scan.fill, scan.wide, scan.blocks = fill, offset_t is int64_t, blocks
    scan.a_offsets, scan.b_offsets = &a_offsets[0], &b_offsets[0]
    scan.a_data, scan.b_data, scan.numbers, scan.starts = &a_data[0], &b_data[0], &numbers[0], &starts[0]
    scan.row, scan.row_limit, scan.a_at, scan.a_limit, scan.b_at, scan.b_limit = \
        first_row, row_limit, a_start, a_limit, b_start, b_limit
    scan.block, scan.block_limit = first_block, block_limit
    scan.lines, scan.status, scan.last_length = 0, SCAN_OK, -1
    with nogil:
        if fill:
            a_offsets[first_block if blocks else first_row] = <offset_t>a_start
            b_offsets[first_row] = <offset_t>b_start
        handle = fopen(name, "rb")
        buffer = <uint8_t *>malloc(BLOCK + LONGEST_LINE + 1 + SCAN_PADDING)
        if handle == NULL or buffer == NULL or harness_seek(handle, start) != 0:
            scan.status = SCAN_NOT_OPENED
            done = True
        while not done:
            # top the buffer up behind the unfinished line it holds (bytes begin .. size)
            if begin > 0:
                memmove(buffer, buffer + begin, size - begin)
                size -= begin
                begin = 0
            wanted = min(BLOCK + LONGEST_LINE - size, stop - offset)
            got = <int64_t>fread(buffer + size, 1, <size_t>wanted, handle) if wanted > 0 else 0
            if got < wanted:
                scan.status = SCAN_NOT_OPENED  # shorter than when it was measured
                break
            size += got
            offset += got
            if offset == stop:
                if size == 0:
                    break
                if buffer[size - 1] != 10:
                    buffer[size] = 10  # the last line's missing line break
                    size += 1
                done = True
            last = size - 1  # the last line break: the lines before it are whole
            while last >= 0 and buffer[last] != 10:
                last -= 1
            if last >= 0:
                harness_scan_lines(&scan, buffer, last + 1)
                if scan.status != SCAN_OK:
                    break
                begin = last + 1
            if not done and size - begin >= LONGEST_LINE:
                scan.status = SCAN_TOO_LONG
                break
        if handle != NULL:
            fclose(handle)
        free(buffer)
    result[0] = scan.status
    result[1] = scan.row - first_row
    result[2] = scan.a_at - a_start
    result[3] = scan.b_at - b_start
    result[4] = scan.lines
    result[5] = scan.block - first_block


def move_bytes(uint8_t[::1] column, int64_t source, int64_t to, int64_t n):
    """``column[to:to + n] = column[source:source + n]``, in place, the two ranges overlapping or not."""
    if n > 0 and (source < 0 or to < 0 or source + n > column.shape[0] or to + n > column.shape[0]):
        raise ValueError(f"move_bytes: {n} bytes from {source} to {to} in a column of {column.shape[0]}")
    if n > 0:
        with nogil:
            memmove(&column[to], &column[source], <size_t>n)


def parse_number(const uint8_t[::1] text):
    """The number a field holds as the reader parses it, or None where the reader stops (for the tests).

    >>> parse_number(b"-1.5e3"), parse_number(b"0.1"), parse_number(b"1e999"), parse_number(b"nan")
    (-1500.0, 0.1, None, None)
    """
    cdef double value = 0.0
    if text.shape[0] == 0:
        return None
    if harness_parse_number(&text[0], text.shape[0], &value) != SCAN_OK:
        return None
    return value
