"""What a results folder records of its experiment (``config.resolved.yaml``), read once into typed fields.

The later stages on a saved folder (report, plan, trend charts) read these fields, never the
YAML's keys; measure names are parsed once here, by the one parser.

>>> recorded = Recorded.of({"name": "demo", "measures": ["nDCG(gains={1:0,2:3})@10", "AP"],
...     "gain_schemes": {"graded": "gains={1:0,2:3}"}, "systems": [{"name": "a"}, {"name": "b"}],
...     "datasets": [{"name": "d", "relevance_level": 2}], "baseline": "a"})
>>> [recorded.label(m) for m in recorded.measures], recorded.relevance_levels["d"]
(['nDCG@10 [graded]', 'AP'], 2)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.errors import HarnessError
from harness.measures.parse import labeller, parse_measure
from harness.measures.spec import Measure


@dataclass(frozen=True)
class RecordedGuard:
    measure: str
    dataset: str | None = None
    segment: str | None = None


@dataclass(frozen=True)
class RecordedRelease:
    production: str
    candidate: str
    guards: tuple[RecordedGuard, ...] = ()


def release_section(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The release gate's section of a resolved config as written (``{}``: none); a folder written before the gate had
    its own top-level key holds it under ``report``.

    >>> release_section({"release": {"production": "a"}}), release_section({"report": {"release": {"production": "b"}}})
    ({'production': 'a'}, {'production': 'b'})
    """
    return config.get("release") or (config.get("report") or {}).get("release") or {}


@dataclass(frozen=True)
class Recorded:
    """The experiment as its results folder records it."""

    name: str
    title: str | None = None
    description: str = ""
    measures: tuple[Measure, ...] = ()  # in the config's order, parsed once
    gain_schemes: Mapping[str, str] = field(default_factory=dict)
    systems: tuple[str, ...] = ()
    datasets: tuple[str, ...] = ()
    relevance_levels: Mapping[str, Any] = field(default_factory=dict)
    baseline: str | None = None
    stats: Mapping[str, Any] = field(default_factory=dict)  # the stats section as run (for the settings shown)
    conventions: Mapping[str, Any] = field(default_factory=dict)
    # measure -> the conventions it was evaluated under that differ from ``conventions`` (the profile's tool's own)
    measure_conventions: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    cutoffs: tuple[int, ...] = ()
    profile: str | None = None
    release: RecordedRelease | None = None

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> Recorded:
        """From the resolved config as written (``config.resolved.yaml``)."""
        report = config.get("report") or {}
        release = release_section(config)
        datasets = config.get("datasets") or []
        return cls(
            name=str(config["name"]),
            title=report.get("title"),
            description=config.get("description") or "",
            measures=tuple(parse_measure(m) for m in config.get("measures") or []),
            gain_schemes=dict(config.get("gain_schemes") or {}),
            systems=tuple(s["name"] for s in config.get("systems") or []),
            datasets=tuple(d["name"] for d in datasets),
            relevance_levels={d["name"]: d.get("relevance_level") for d in datasets},
            baseline=config.get("baseline"),
            stats=dict(config.get("stats") or {}),
            conventions=dict(config.get("conventions") or {}),
            measure_conventions=dict(config.get("measure_conventions") or {}),
            cutoffs=tuple(config.get("cutoffs") or ()),
            profile=config.get("profile"),
            release=None
            if not release
            else RecordedRelease(
                release["production"],
                release["candidate"],
                tuple(RecordedGuard(g["measure"], g.get("dataset"), g.get("segment")) for g in release.get("guards") or ()),
            ),
        )

    @property
    def label(self) -> Callable[[Measure | str], str]:
        """A measure's display name (a named gain scheme shows as its name: ``nDCG@10 [graded]``)."""
        plain = labeller({name: "" if text == "linear" else text for name, text in self.gain_schemes.items()})
        return lambda measure: plain(str(measure))

    def measure(self, name: str) -> Measure | None:
        """A computed measure by its canonical name, its label, or any spelling of it the parser reads
        (``REO(group=provider)@10`` is ``REO(group='provider')@10``)."""
        label = self.label
        found = next((m for m in self.measures if name in (str(m), label(m))), None)
        if found is not None:
            return found
        try:
            parsed = parse_measure(name)
        except HarnessError:
            return None
        return next((m for m in self.measures if m == parsed), None)


__all__ = ["Recorded", "RecordedGuard", "RecordedRelease"]
