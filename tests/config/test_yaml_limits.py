"""Configs that would exhaust memory, time or the stack end in exit 2 with the line and the limit (issue 49).

Each bomb runs in a real process held to 2 GB of address space and 60 s: before the limits, the billion-laughs list
hung past 120 s at 3 GB, and 10^5 nested lists exited 70 with a RecursionError."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.config.yaml_limits import MAX_DEPTH, MAX_NODES, load_bounded

_BOUNDED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))
from harness.cli import main
sys.exit(main(["validate", sys.argv[1]], sys.stdout, sys.stderr))
"""


def _laughs(levels: int = 9) -> str:
    lines = ["experiment: lol", "x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"x{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels)]
    lines.append(f"measures: *a{levels - 1}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (_laughs(), f"more than {MAX_NODES} values once its aliases"),
        ("experiment: deep\nmeasures: " + "[" * 100_000 + "]" * 100_000 + "\n", f"more than {MAX_DEPTH} deep"),
        ("experiment: loop\nmeasures: &a [nDCG, *a]\n", "refers to a collection that holds it"),
    ],
    ids=["billion-laughs", "nested-100000", "recursive-alias"],
)
def test_a_yaml_bomb_is_refused_in_bounded_time_and_memory(tmp_path: Path, text: str, says: str) -> None:
    config = tmp_path / "bomb.yaml"
    config.write_text(text)
    done = subprocess.run([sys.executable, "-c", _BOUNDED, str(config)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr[-2000:]
    assert says in done.stderr and str(config) in done.stderr and "line " in done.stderr
    assert len(done.stderr) < 2000  # the value is never formatted in full


def test_a_config_larger_than_the_limit_is_not_read(tmp_path: Path) -> None:
    from harness.config.yaml_limits import MAX_BYTES

    config = tmp_path / "huge.yaml"
    with config.open("wb") as out:  # sparse: its size is there, its bytes need not be
        out.truncate(MAX_BYTES + 1)
    done = subprocess.run([sys.executable, "-c", _BOUNDED, str(config)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2 and f"more than the {MAX_BYTES} harness reads" in done.stderr, done.stderr


def test_aliases_within_the_limit_read_as_yaml_does() -> None:
    """Shared values are fine: the bound counts what a document stands for, and reading it gives yaml's own value."""
    import yaml

    text = "base: &b {k: 10, cutoffs: [5, 10]}\na: *b\nb: [*b, *b]\n"
    assert load_bounded(text, Path("c.yaml")) == yaml.safe_load(text)
