# The signatures of the compiled kernels in _align_kernels.pyx.
import numpy as np

def block_starts(offsets: np.ndarray, data: np.ndarray, n: int) -> np.ndarray: ...
def group_rows(codes: np.ndarray, n_codes: int) -> tuple[np.ndarray, np.ndarray]: ...
def hash_rows(rows: np.ndarray, offsets: np.ndarray, data: np.ndarray, hashes: np.ndarray, lo: int, hi: int) -> None: ...
def duplicate_blocks(
    b_lo: int,
    b_hi: int,
    bounds: np.ndarray,
    order: np.ndarray,
    grouped: bool,
    o: np.ndarray,
    d: np.ndarray,
    prefer: np.ndarray,
    use_prefer: bool,
    drop: np.ndarray,
) -> None: ...
def rank_blocks(
    b_lo: int,
    b_hi: int,
    bounds: np.ndarray,
    order: np.ndarray,
    grouped: bool,
    judged: np.ndarray,
    active: np.ndarray,
    ro: np.ndarray,
    rd: np.ndarray,
    run_score: np.ndarray,
    j_bounds: np.ndarray,
    j_rows: np.ndarray,
    j_hashes: np.ndarray,
    qo: np.ndarray,
    qd: np.ndarray,
    q_labels: np.ndarray,
    keep: int,
    ties: int,
    single: bool,
    depth: int,
    start: np.ndarray,
    out_rows: np.ndarray,
    out_labels: np.ndarray,
    kept: np.ndarray,
    dropped: np.ndarray,
    beyond: np.ndarray,
    first_dropped: np.ndarray,
) -> None: ...
def string_table(offsets: np.ndarray, data: np.ndarray) -> np.ndarray: ...
def first_repeat(offsets: np.ndarray, data: np.ndarray) -> int: ...
def find_strings(
    offsets: np.ndarray,
    data: np.ndarray,
    rows: np.ndarray,
    t_offsets: np.ndarray,
    t_data: np.ndarray,
    table: np.ndarray,
    out: np.ndarray,
    lo: int,
    hi: int,
) -> None: ...
