"""The error rates and power of ``stats.resampling: auto`` beside ``always``, on the shapes
``tests/comparison/test_resampling.py`` asserts bounds for: each tail's rejection rate over 1,500 A/A trials at 800
users (40 for the few), and the share detected once every trial is shifted by 0.1 sd.

    python benchmarks/resampling_rates.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from harness.comparison.compare import CompareSettings, resampled_rows
    from harness.stats import keyed, paired
    from tests.comparison.test_resampling import SHAPES

    alpha, trials = 0.05, 1500
    print("shape: share t decided; A/A up / down, auto then always; power, auto then always")
    for shape in SHAPES:
        rng = np.random.default_rng(sorted(SHAPES).index(shape))  # the test's trials
        null = np.stack([SHAPES[shape](rng, 800) for _ in range(trials)])
        keys = keyed.numbered_keys(7, null.shape[1])
        found = []
        for d in (null, null + 0.1 * null.std()):
            mask = np.ones(d.shape, dtype=bool)
            resample = resampled_rows(d, mask, CompareSettings(permutations=1000))
            assert resample is not None
            tested = paired.run_tests(d, keys, ("t", "randomization"), 1000, mask=mask, resample=resample)
            always = paired.run_tests(d, keys, ("randomization",), 1000, mask=mask).randomization
            auto = np.where(resample, tested.randomization, tested.t.p)
            up = d.mean(axis=1) > 0
            found.append([((p < alpha) & side).mean() for p in (auto, always) for side in (up, ~up)] + [resample.mean()])
        (up_auto, down_auto, up_always, down_always, share), shifted = found
        print(
            f"{shape}: {1 - share:.0%}; {up_auto:.4f} / {down_auto:.4f}, {up_always:.4f} / {down_always:.4f}; "
            f"{shifted[0] + shifted[1]:.3f}, {shifted[2] + shifted[3]:.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
