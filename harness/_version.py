"""harness's version: the one place it is written (the package's metadata reads it from here at build time).

>>> from harness._version import __version__
>>> __version__.count(".")
2
"""

__version__ = "0.1.0"
