"""Each default's one home, importing nothing but ``typing``: the command line reads them while it starts (``--help``
shows them).

>>> DEFAULT_DATASET, DEFAULT_POWER
('default', 0.8)
"""

from typing import Final

DEFAULT_SEED = 20261121  # the paired tests' seed unless stats.seed, --seed or seed= says otherwise
DEFAULT_MIN_AFFECTED = 0.01  # release.min_affected: the rarest harm (a share of users) auto's t-test must not miss
DEFAULT_POWER = 0.8  # what "users needed" and the minimum detectable effect plan for, unless release.power says otherwise
DEFAULT_DATASET = "default"  # the name of a config's one unnamed dataset, and of the API's and harness compare's data:
# the tests' random draws are keyed by (seed, dataset, segment, query), so one name gives one p-value everywhere
# the paired tests, wherever they are asked for (config stats, harness compare, harness.compare)
DEFAULT_TESTS: Final = ("t", "wilcoxon", "randomization", "bootstrap")
DEFAULT_PRIMARY: Final = "randomization"  # the test whose corrected p decides significance
# where the randomization test and the bootstrap run: only where t cannot be trusted (auto), or on every comparison
DEFAULT_RESAMPLING: Final = "auto"
DEFAULT_CORRECTION: Final = "holm"
DEFAULT_FAMILY: Final = "per_measure"
DEFAULT_ALPHA = 0.05
MAX_ALPHA = 0.5  # above it a one-sided (1 - alpha) bound lies on the wrong side of its estimate
DEFAULT_PERMUTATIONS = 10_000  # permutations of the randomization test, and resamples of the bootstrap
# one spelling for every column option, in a config as on the command line: a query is a user, a document an item
COLUMN_SYNONYMS: Final = {"user": "query", "item": "doc"}
