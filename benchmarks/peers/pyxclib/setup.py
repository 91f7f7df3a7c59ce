"""pyxclib's evaluation code, built as its own setup.py builds it (the _sparse Cython module), without the parts
(classifiers, embeddings, nearest-neighbour search) whose dependencies these metrics never use."""

import numpy
from Cython.Build import cythonize
from setuptools import setup
from setuptools.extension import Extension

setup(
    name="xclib",
    version="0.97",
    packages=["xclib", "xclib.utils", "xclib.evaluation"],
    ext_modules=cythonize([Extension("xclib.utils._sparse", ["xclib/utils/_sparse.pyx"], include_dirs=[numpy.get_include()])]),
)
