"""The beyond-accuracy and fairness measures at MovieLens-1M size, beside the peers' own code, as whole processes.

    python benchmarks/beyond_peers.py            # 6,040 users x 10 of 100 recommended items, 3,706 items, ~1M training rows
    python benchmarks/beyond_peers.py --rounds 1

The data is record_bench's MovieLens-1M-shaped set (benchmarks/data/ml1m-like), with the production run's items the
user trained on removed (Microsoft Recommenders refuses a recommendation already in the training data, as a
recommender would not make it). Each peer runs its own code on it:

* Microsoft Recommenders: ``recommenders.evaluation.python_evaluation`` 1.2.0, in a virtualenv of its own with its
  pins (``numpy<2``, ``pandas<3``: its diversity fails under pandas 3), made by ``make bench`` in .venv/peers
  (``benchmarks/peers/beyond_msrec.py``);
* RecBole: its metric classes, from RecBole 1.2.1 on PyPI with ``--no-deps`` in .venv/peers-recbole (made by
  ``make bench``; its package's ``__init__`` modules, which import torch, not run), called as its evaluator calls
  them (``benchmarks/peers/beyond_recbole.py``);
* LensKit: its ExposureGini and ListGini (lenskit 2025.8.1 with ``--no-deps`` in .venv/peers-lenskit, made by
  ``make bench``; a stand-in for torch, which these metrics never call), as its RunAnalysis calls them
  (``benchmarks/peers/fairness_lenskit.py``).

* Elliot: its fairness and popularity-bias modules (REO, RSP, ItemMAD, PopREO, PopRSP, UserMAD, BiasDisparity BR
  and BD), from a checkout of sisinflab/elliot named by ``ELLIOT_SRC`` (Elliot is not on PyPI), with the evaluation
  objects its evaluator builds (``benchmarks/peers/fairness_elliot.py``), over a provider column of 5
  item groups and the 5 user segments; bias disparity is one value per (user group, item category) cell, 25 measures
  in harness.

* pyxclib: its psprecision and psndcg (pyxclib is not on PyPI: ``make bench PYXCLIB_SRC=DIR`` builds a checkout of
  kunaldahiya/pyxclib with its Cython module and numba in .venv/peers-pyxclib), as the golden case's runner called
  them (``benchmarks/peers/propensity_pyxclib.py``).

A peer that is not there (no checkout named, no virtualenv made) is skipped, with a line saying how to get it; the
figures measured with it are in docs/speed.md.

For each measure: the peer's process and ``harness eval`` of the measure that reproduces it (the tool's profile),
alternating, --rounds rounds (a process over 20 s runs once); the medians of wall time and peak memory, the ratio,
and whether the two values agree to 1e-9. Then each tool's measures all in one process against all in one
``harness eval``: what a user of the tool runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import pandas as pd
from _process import measure_process  # benchmarks/, this script's folder
from record_bench import movielens_1m_like

from harness.measures.registry import REGISTRY

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SLOW = 20.0  # seconds: a process slower than this is timed once
# each tool's names, timed in this order; harness's measure for each is the one its definition names for it
# (harness.measures: PeerName), at k = 10
CASES = {
    "msrec": ["catalog_coverage", "distributional_coverage", "novelty", "diversity", "serendipity"],
    "recbole": ["ItemCoverage", "AveragePopularity", "ShannonEntropy", "GiniIndex", "TailPercentage"],
    "lenskit": ["ExposureGini", "ListGini"],
    "elliot": [
        "REO",
        "RSP",
        "ItemMADranking",
        "ItemMADrating",
        "PopREO",
        "PopRSP",
        "UserMADranking",
        "UserMADrating",
        "BiasDisparityBR",
        "BiasDisparityBD",
    ],
    "pyxclib": ["psprecision", "psndcg"],
}
GROUPS = 5  # the item groups of the fairness measures: a provider column, by item number
TOLERANCE = {"lenskit": 1e-6, "pyxclib": 1e-6}  # LensKit's exposure and pyxclib's DCG in float32; the others to 1e-9
RATED = ("elliot", "pyxclib")  # the tools given a relevance threshold: a rating of 4 or more is relevant


def harness_measure(tool: str, name: str, k: int = 10) -> str:
    """The measure whose definition names ``tool``'s ``name`` (its parameters reproduce the tool's), at ``k``.

    >>> harness_measure("msrec", "novelty"), harness_measure("recbole", "GiniIndex"), harness_measure("elliot", "REO")
    ('Novelty(weight=recommendation,cold=zero)@10', 'Gini(catalog=recbole)@10', 'REO(group=provider)@10')
    """
    definition, spelling = next((d, p.spelling) for d in REGISTRY for p in d.peer_names if (p.tool, p.name) == (tool, name))
    if any(p.name == "group" and p.required for p in definition.params):  # the catalogue column the tool is given
        spelling = spelling.replace("(", "(group=provider,", 1) if "(" in spelling else f"{spelling}(group=provider)"
    return f"{spelling}@{k}"


def harness_measures(tool: str, name: str, users: Path, catalogue: Path, k: int = 10) -> list[str]:
    """:func:`harness_measure`, and for bias disparity (one value per user group and item category, as Elliot gives
    them) one measure per cell: the groups of ``users`` (a CSV ``user,GROUP``) by name, the catalogue's providers."""
    measure = harness_measure(tool, name, k)
    if not measure.startswith("BiasDisparity("):
        return [measure]
    groups = sorted(pd.read_csv(users, dtype=str).iloc[:, 1].unique())
    categories = sorted(pd.read_csv(catalogue)["provider"].unique())
    return [measure.replace("(", f"(user_group='{g}',category={c},", 1) for g in groups for c in categories]


def user_clustering(users: Path, folder: Path) -> Path:
    """The users' groups (a CSV ``user,GROUP``) as Elliot's clustering TSV: each group numbered by its name's order."""
    frame = pd.read_csv(users, dtype=str)
    number = {g: i for i, g in enumerate(sorted(frame.iloc[:, 1].unique()))}
    path = folder / f"{users.stem}-clusters.tsv"
    pd.DataFrame({"user": frame.iloc[:, 0], "group": frame.iloc[:, 1].map(number)}).to_csv(
        path, sep="\t", header=False, index=False
    )
    return path


def _provider_catalogue(folder: Path) -> tuple[Path, Path]:
    """The catalogue with a provider column (item number mod GROUPS), and the same as Elliot's clustering TSV."""
    catalogue, clustering = folder / "items-provider.csv", folder / "providers.tsv"
    if not catalogue.exists():
        items = pd.read_csv(folder / "items.csv", dtype={"item": str})
        items["provider"] = items["item"].str[1:].astype(int) % GROUPS
        items.to_csv(catalogue, index=False)
        items[["item", "provider"]].to_csv(clustering, sep="\t", header=False, index=False)
    return catalogue, clustering


def _unseen_run(folder: Path) -> Path:
    """The production run without the items each user trained on (written once)."""
    path = folder / "production-unseen.csv"
    if not path.exists():
        train = pd.read_csv(folder / "train.csv", dtype=str)
        run = pd.read_csv(folder / "production.csv", dtype={"user": str, "item": str})
        seen = run.merge(train.assign(seen=True), on=["user", "item"], how="left")["seen"].notna().to_numpy()
        run[~seen].to_csv(path, index=False)
    return path


def _peer_command(tool: str, name: str, folder: Path, run: Path, python: dict[str, str]) -> list[str]:
    if tool == "msrec":
        return [python[tool], str(HERE / "peers" / "beyond_msrec.py"), str(folder / "train.csv"), str(run), "--measure", name]
    if tool == "lenskit":
        return [python[tool], str(HERE / "peers" / "fairness_lenskit.py"), str(folder / "items.csv"), str(run), "--metric", name]
    if tool == "elliot":
        files = [str(folder / f) for f in ("train.csv", "test.csv", "providers.tsv")]
        users = ["--users", str(user_clustering(folder / "segments.csv", folder))]
        return [sys.executable, str(HERE / "peers" / "fairness_elliot.py"), *files, str(run), *users, "--metric", name]
    if tool == "pyxclib":
        files = [str(folder / f) for f in ("items.csv", "train.csv", "test.csv")]
        return [python[tool], str(HERE / "peers" / "propensity_pyxclib.py"), *files, str(run), "--metric", name]
    files = [str(folder / f) for f in ("train.csv", "test.csv", "items.csv")]
    return [python[tool], str(HERE / "peers" / "beyond_recbole.py"), *files, str(run), "--metric", name]


def harness_command(
    tool: str, names: list[str], folder: Path, run: Path, catalogue: Path | None = None, users: Path | None = None
) -> list[str]:
    """``harness eval`` of the measures that reproduce ``tool``'s ``names``, under its profile, printing JSON; the
    catalogue (default: the folder's items.csv) has a provider column for Elliot's fairness measures, and ``users``
    (default: the folder's segments.csv; a CSV ``user,GROUP``) the users' groups."""
    catalogue, users = catalogue or folder / "items.csv", users or folder / "segments.csv"
    # Elliot's and pyxclib's relevance threshold (a rating of 4 or more), Elliot's groups; the other tools' measures
    # read neither, and a level above 1 would leave out the users without a rating that high (queries: relevant,
    # RecBole's). The profile does the rest: each measure over the users the tool evaluates it over
    extra = ["-l", "4"] if tool in RATED else []
    if tool == "elliot":
        group = pd.read_csv(users, nrows=0).columns[1]
        extra += ["--items-groups", "provider", "--segments", str(users), "--segments-columns", f"query=user,segment={group}"]
    return [
        sys.executable,
        "-m",
        "harness",
        "eval",
        str(folder / "test.csv"),
        str(run),
        "--qrels-columns",
        "query=user,doc=item,relevance=rating",
        "--run-columns",
        "query=user,doc=item,score=score",
        "--train",
        str(folder / "train.csv"),
        "--train-columns",
        "query=user,doc=item",
        "--items",
        str(catalogue),
        *extra,
        "--profile",
        tool,
        "-m",
        ",".join(m for name in names for m in harness_measures(tool, name, users, catalogue)),
        "--quiet",
        "--format",
        "json",
    ]


_HOW = {
    "msrec": "make bench makes it",
    "lenskit": "make bench makes it",
    "recbole": "make bench makes it",
    "pyxclib": "git clone https://github.com/kunaldahiya/pyxclib and run make bench PYXCLIB_SRC=that folder",
}


def _missing(tool: str, python: dict[str, str]) -> bool:
    """Whether the peer cannot run here; if so, one line says why and how to get it."""
    if tool == "elliot":
        source = Path(os.environ.get("ELLIOT_SRC", "")).expanduser()
        # the folder fairness_elliot.py needs: a checkout of sisinflab/elliot
        if os.environ.get("ELLIOT_SRC") and (source / "elliot" / "evaluation" / "metrics" / "fairness").is_dir():
            return False
        print(
            "elliot: skipped, no checkout: git clone https://github.com/sisinflab/elliot and set ELLIOT_SRC to it",
            file=sys.stderr,
        )
        return True
    if Path(python[tool]).exists():
        return False
    print(f"{tool}: skipped, no {python[tool]}: {_HOW[tool]}", file=sys.stderr)
    return True


def _timed(command: list[str], rounds: int) -> tuple[float, float, str]:
    """Medians of wall time and peak memory over the rounds (one round for a slow process), and its output."""
    times, peaks, out = [], [], ""
    for _ in range(rounds):
        seconds, peak, out = measure_process(command)
        times.append(seconds)
        peaks.append(peak)
        if seconds > SLOW:
            break
    return statistics.median(times), statistics.median(peaks), out


def _values(out: str, harness: bool) -> list[float]:
    if harness:
        return [float(r["value"]) for r in json.loads(out)["results"]]
    return [float(line.split()[-1]) for line in out.splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tools", nargs="+", choices=list(CASES), default=list(CASES), help="the peers to run")
    parser.add_argument("--data", type=Path, default=HERE / "data" / "ml1m-like")
    parser.add_argument(
        "--msrec-python", default=str(ROOT / ".venv" / "peers" / "bin" / "python"), help="a Python with msrec's pins"
    )
    parser.add_argument(
        "--lenskit-python", default=str(ROOT / ".venv" / "peers-lenskit" / "bin" / "python"), help="a Python with LensKit"
    )
    parser.add_argument(
        "--pyxclib-python", default=str(ROOT / ".venv" / "peers-pyxclib" / "bin" / "python"), help="a Python with pyxclib"
    )
    parser.add_argument(
        "--recbole-python", default=str(ROOT / ".venv" / "peers-recbole" / "bin" / "python"), help="a Python with RecBole"
    )
    args = parser.parse_args(argv)
    movielens_1m_like(args.data)
    catalogue, _ = _provider_catalogue(args.data)
    run = _unseen_run(args.data)
    python = {
        "msrec": args.msrec_python,
        "lenskit": args.lenskit_python,
        "pyxclib": args.pyxclib_python,
        "recbole": args.recbole_python,
    }
    tools = [tool for tool in args.tools if not _missing(tool, python)]
    print(f"beyond accuracy and fairness at MovieLens-1M size ({run}), whole processes, medians of {args.rounds} rounds:")
    header = f"{'peer':<9}{'its measure':<25}{'harness measure':<58}{'peer s':>8}{'harness s':>10}{'ratio':>7}"
    print(header + f"{'peer MB':>9}{'harness MB':>11}  values")
    for tool, names in ((tool, CASES[tool]) for tool in tools):
        for name in [*names, "all"]:
            ours = f"all {len(names)}, one process" if name == "all" else harness_measure(tool, name)
            cells = 1 if name == "all" else len(harness_measures(tool, name, args.data / "segments.csv", catalogue))
            ours = ours if cells == 1 else f"{ours.replace('(group=provider,', '(')}, {cells} cells"  # one a cell
            peer_s, peer_mb, peer_out = _timed(_peer_command(tool, name, args.data, run, python), args.rounds)
            asked = names if name == "all" else [name]
            ours_s, ours_mb, ours_out = _timed(harness_command(tool, asked, args.data, run, catalogue), args.rounds)
            theirs, mine = _values(peer_out, False), _values(ours_out, True)
            agree = len(theirs) == len(mine) and all(
                abs(a - b) <= TOLERANCE.get(tool, 1e-9) * max(1.0, abs(a)) for a, b in zip(theirs, mine, strict=True)
            )
            print(
                f"{tool:<9}{name:<25}{ours:<58}{peer_s:>8.2f}{ours_s:>10.2f}{peer_s / ours_s:>6.1f}x"
                f"{peer_mb:>9.0f}{ours_mb:>11.0f}  {'equal' if agree else f'DIFFER {theirs} {mine}'}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
