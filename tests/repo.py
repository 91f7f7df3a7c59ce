"""The repository's root, as the tests find it: beside this folder, never from the installed package (a wheel's
harness lives in site-packages, without the configs and benchmarks the tests read)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
