# The signatures of the compiled kernels in _reader_kernels.pyx.
import numpy as np

OK: int
NOT_OPENED: int
NOT_PLAIN: int
FIELD_COUNT: int
NOT_A_NUMBER: int
TOO_LONG: int
FULL: int

def read_part(
    path: bytes,
    start: int,
    stop: int,
    n_fields: int,
    field_a: int,
    field_b: int,
    field_number: int,
    a_offsets: np.ndarray,
    a_data: np.ndarray,
    b_offsets: np.ndarray,
    b_data: np.ndarray,
    numbers: np.ndarray,
    first_row: int,
    row_limit: int,
    a_start: int,
    a_limit: int,
    b_start: int,
    b_limit: int,
    blocks: bool,
    starts: np.ndarray,
    first_block: int,
    block_limit: int,
    fill: bool,
    result: np.ndarray,
) -> None: ...
def move_bytes(column: np.ndarray, source: int, to: int, n: int) -> None: ...
def parse_number(text: bytes) -> float | None: ...
