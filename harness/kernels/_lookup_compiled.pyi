# The signatures of the compiled kernels in _lookup_compiled.pyx.
import numpy as np

def in_sorted_lists(owner: np.ndarray, value: np.ndarray, offsets: np.ndarray, lists: np.ndarray) -> np.ndarray: ...
def largest_sums(
    offsets: np.ndarray, values: np.ndarray, keep: np.ndarray, k: int, per_rank: np.ndarray, out: np.ndarray, lo: int, hi: int
) -> None: ...
def segment_sums(offsets: np.ndarray, values: np.ndarray) -> np.ndarray: ...
def cut_sums(
    offsets: np.ndarray,
    code: np.ndarray,
    table: np.ndarray,
    label: np.ndarray,
    rows: np.ndarray,
    level: float,
    per_rank: np.ndarray,
) -> np.ndarray: ...
def distinct_pairs(
    user: np.ndarray, item: np.ndarray, code_of_item: np.ndarray, n_users: int, n_codes: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...
def gather_segments(indptr: np.ndarray, values: np.ndarray, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...
def grouped_rows(
    offsets: np.ndarray, code: np.ndarray, group: np.ndarray, user_ok: np.ndarray
) -> tuple[np.ndarray, np.ndarray]: ...
def segment_group_cells(
    offsets: np.ndarray,
    code: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    keep: np.ndarray,
    label: np.ndarray,
    rows: np.ndarray,
    level: float,
) -> np.ndarray: ...
def segment_counts(offsets: np.ndarray, mask: np.ndarray) -> np.ndarray: ...
def code_weights(offsets: np.ndarray, code: np.ndarray, user_weight: np.ndarray, n_codes: int) -> np.ndarray: ...
def feature_sums(offsets: np.ndarray, code: np.ndarray, features: np.ndarray, sums: np.ndarray, s_lo: int, s_hi: int) -> None: ...
def unexpected_sums(
    offsets: np.ndarray,
    rows: np.ndarray,
    similarity: np.ndarray,
    history_length: np.ndarray,
    label: np.ndarray,
    level: float,
    sums: np.ndarray,
    s_lo: int,
    s_hi: int,
) -> None: ...
