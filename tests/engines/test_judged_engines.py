"""A dataset with a model judge gives the same numbers on a Dask LocalCluster as in one process, bit for bit: both
labellings' values (the judge's grades mapped onto people's scale, read by the workers from the run's scratch), the
corrected summary and comparisons, the audit of the judge and the gate."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from harness.config.load import load_config
from harness.config.schema import Engine as EngineSpec
from harness.pipeline.experiment import run_experiment

pytestmark = [pytest.mark.cluster, pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")]


def test_a_judged_run_on_dask_is_the_local_run(tmp_path: Path, client: Any) -> None:
    from harness.demo import trec

    trec(tmp_path, n_queries=60, sample=20)
    config = {
        "experiment": "judged",
        "datasets": [
            {"name": "trec", "qrels": "people-sample.txt", "judge": {"qrels": "judge.txt", "name": "llm", "grades": {3: 2}}}
        ],
        "systems": [{"name": s, "runs": f"{s}.run"} for s in ("hybrid", "dense", "bm25")],
        "measures": ["nDCG@10", "AP", "RR@10"],
        "baseline": "hybrid",
        "stats": {"permutations": 200, "resamples": 200},
        "release": {"production": "hybrid", "candidate": "dense", "guards": [{"measure": "nDCG@10", "max_drop": 0.02}]},
        "tracking": {"enabled": False},
        "report": {"enabled": False},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    outcomes = {}
    for engine in ("local", "dask"):
        experiment = load_config(path, output=tmp_path / engine)
        outcomes[engine] = run_experiment(dataclasses.replace(experiment, engine=EngineSpec(name=engine)))
    local, dask = outcomes["local"], outcomes["dask"]
    for table in ("summary", "comparisons"):
        pd.testing.assert_frame_equal(getattr(local, table), getattr(dask, table), check_exact=True)
    assert local.summary is not None and (local.summary["estimator"] == "ppi").all()
    assert local.results_dir is not None and dask.results_dir is not None
    agreement = [json.loads((folder / "agreement.json").read_text()) for folder in (local.results_dir, dask.results_dir)]
    assert agreement[0] == agreement[1]
    assert local.decision is not None and dask.decision is not None
    assert [g.drop_high for g in local.decision.guards] == [g.drop_high for g in dask.decision.guards]
