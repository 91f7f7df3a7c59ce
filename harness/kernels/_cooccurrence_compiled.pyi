# The signatures of the compiled kernels in _cooccurrence_compiled.pyx.
import numpy as np

def rows_by_code(codes: np.ndarray, starts: np.ndarray, ends: np.ndarray, n_known: int) -> tuple[np.ndarray, np.ndarray]: ...
def earlier_pairs(
    codes: np.ndarray,
    by_code: np.ndarray,
    placed: np.ndarray,
    c_lo: int,
    c_hi: int,
    scale: np.ndarray,
    iu_ptr: np.ndarray,
    iu_idx: np.ndarray,
    ui_ptr: np.ndarray,
    ui_idx: np.ndarray,
    out: np.ndarray,
) -> None: ...
def history_pairs(
    codes: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    h_off: np.ndarray,
    h_codes: np.ndarray,
    q_lo: int,
    q_hi: int,
    n_known: int,
    scale: np.ndarray,
    iu_ptr: np.ndarray,
    iu_idx: np.ndarray,
    ui_ptr: np.ndarray,
    ui_idx: np.ndarray,
    out: np.ndarray,
) -> None: ...
