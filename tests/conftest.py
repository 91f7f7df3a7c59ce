"""Shared fixtures: the trec_eval reference data lives in ../shared (never copied here)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TREC_EVAL = ROOT.parent / "shared" / "peers" / "trec_eval"


@pytest.fixture(scope="session")
def trec_eval_dir() -> Path:
    if not TREC_EVAL.exists():
        pytest.fail(f"trec_eval reference data not found at {TREC_EVAL}; it ships beside the repository in shared/")
    return TREC_EVAL
