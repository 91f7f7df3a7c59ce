"""The repository holds our code and our data: a peer's values are vendored into tests/fixtures (with its notice
where its terms ask), never its code (docs/architecture.md, What the repository holds)."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.repo import ROOT

# the opening words of the licences code is copied under, split so that this file does not hold them
NOTICES = re.compile(
    "|".join(
        [
            "Permission is hereby " + "granted",
            "Licensed under the " + "Apache License",
            "GNU (Lesser )?General " + "Public License",
            "Redistribution and use in source " + "and binary forms",
            "NIST-developed " + "software",
        ]
    ),
    re.IGNORECASE,
)


def _tracked() -> list[str]:
    done = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip("not a git checkout: the tracked files are unknown")
    return done.stdout.splitlines()


def test_a_licence_notice_is_only_beside_vendored_values() -> None:
    noticed = []
    for name in _tracked():
        path = ROOT / name
        if path.is_file() and path.stat().st_size < 2_000_000 and NOTICES.search(path.read_text(errors="replace")):
            noticed.append(name)
    assert noticed, "the check finds trec_eval's notice beside its test outputs"
    assert [n for n in noticed if not n.startswith("tests/fixtures/")] == []


def test_the_peers_folder_holds_only_our_scripts() -> None:
    """Each file under benchmarks/peers is a script of ours that calls a peer from its package or checkout (or our
    stand-in for torch): Python, opening with our docstring, and no package a peer's code would come in as."""
    files = [n for n in _tracked() if n.startswith("benchmarks/peers/")]
    assert len(files) >= 8
    for name in files:
        assert name.endswith(".py") and name.count("/") <= 3, name
        assert (ROOT / name).read_text().startswith('"""'), name
    assert not [n for n in files if n.endswith("__init__.py")]
