"""The compiled kernels, built ahead of time by ``pip install`` (or ``pip wheel``) with the machine's C compiler.

Everything else about the package is in pyproject.toml. Cython translates the ``.pyx`` kernels
to C at build time; an installed harness never compiles anything. Floating point stays strict
(no fast-math, no fused multiply-add contraction), so every value is the same bit for bit on
every machine and equal to the pure-Python reference the tests hold it to.

The kernels' loops run without bounds checks; each kernel checks its arguments once, at its boundary.
``HARNESS_KERNEL_CHECKS=1`` builds them with Cython's bounds and initialisation checks on every access instead
(``make kernel-checks`` runs the kernel tests on such a build): an access past an array is then an IndexError.

The kernels are translated and compiled on every core at once (Cython's threads, build_ext's parallel jobs):
``HARNESS_BUILD_JOBS=N`` sets how many.
"""

import os
import sys

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

KERNELS = {
    "harness.data._align_kernels": "harness/data/_align_kernels.pyx",
    "harness.data._reader_kernels": "harness/data/_reader_kernels.pyx",
    "harness.kernels._cooccurrence_compiled": "harness/kernels/_cooccurrence_compiled.pyx",
    "harness.kernels._lookup_compiled": "harness/kernels/_lookup_compiled.pyx",
    "harness.kernels._ranked_compiled": "harness/kernels/_ranked_compiled.pyx",
    "harness.stats._keyed_compiled": "harness/stats/_keyed_compiled.pyx",
}

# C headers a kernel includes: a change to one rebuilds it
DEPENDS = {
    "harness.data._reader_kernels": ["harness/data/_reader_scan.h"],
    "harness.stats._keyed_compiled": ["harness/stats/_keyed_sums.h"],
}

CHECKED = os.environ.get("HARNESS_KERNEL_CHECKS") == "1"
JOBS = int(os.environ.get("HARNESS_BUILD_JOBS") or os.cpu_count() or 1)


class ParallelBuild(build_ext):
    """build_ext compiling the kernels on ``JOBS`` cores at once, unless ``--parallel`` says otherwise."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if not self.parallel:
            self.parallel = JOBS


if sys.platform == "win32":
    FLAGS = ["/O2", "/fp:strict"]
else:
    FLAGS = ["-O3", "-g0", "-ffp-contract=off", "-fno-fast-math", "-fno-strict-aliasing"]

setup(
    cmdclass={"build_ext": ParallelBuild},
    ext_modules=cythonize(
        [
            Extension(
                name,
                [source],
                extra_compile_args=FLAGS,
                depends=DEPENDS.get(name, []),
                define_macros=[("HARNESS_KERNEL_CHECKS", "1")] if CHECKED else [],
            )
            for name, source in KERNELS.items()
        ],
        compiler_directives={
            "language_level": "3",
            "boundscheck": CHECKED,
            "wraparound": False,  # a negative index is out of bounds, never counted from the end
            "initializedcheck": CHECKED,
            "cdivision": True,
        },
        nthreads=JOBS if sys.platform != "win32" else 0,  # Cython's translation, one process per kernel
    ),
)
