# The signatures of the compiled kernels in _lookup_compiled.pyx.
import numpy as np

def in_sorted_lists(owner: np.ndarray, value: np.ndarray, offsets: np.ndarray, lists: np.ndarray) -> np.ndarray: ...
