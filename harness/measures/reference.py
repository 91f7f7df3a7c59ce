"""``docs/measures.md``'s tables, written from the definitions: one table per family, between markers.

The page's prose (what the measures are for, where the peers disagree, golden cases) is written by hand; each
``<!-- measures: FAMILY -->`` ... ``<!-- end measures -->`` block in it is this module's :func:`table` of that
family, so no fact of a measure is written twice. ``python -m harness.measures.reference`` rewrites the blocks in
place; ``--check`` fails when the page is not what the definitions say (``make lint`` runs it).

>>> ap = REGISTRY["AP"]
>>> name_text(ap), aggregate_text(ap), better_text(ap), param_text(ap.params[1])
('`AP[@k]` (also `MAP`)', 'mean', 'higher', '`denominator` (R, min_R_k)')
>>> elsewhere_text(ap)
'trec_eval `map` / `map_cut_k`; TorchMetrics `RetrievalMAP`'
>>> better_text(REGISTRY["Gini"])
'lower (higher with `form=elliot`)'
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from harness.measures.definition import FAMILIES, MeasureDef, ParamInfo
from harness.measures.peers import PEERS
from harness.measures.registry import REGISTRY
from harness.measures.spec import format_param

PAGE = Path("docs") / "measures.md"
_BLOCK = re.compile(r"(<!-- measures: (?P<family>[a-z -]+) -->\n).*?(<!-- end measures -->)", re.S)


def _cell(text: str) -> str:
    """Text for a Markdown table cell: a pipe would end the cell."""
    return text.replace("|", "\\|")


def name_text(definition: MeasureDef) -> str:
    """Its name with its cutoff (``@k`` required, ``[@k]`` optional) and aliases, in Markdown."""
    cut = {"none": "", "optional": "[@k]", "required": "@k"}[definition.cutoff]
    also = f" (also {', '.join(f'`{a}`' for a in definition.aliases)})" if definition.aliases else ""
    return f"`{definition.name}{cut}`{also}"


def param_text(info: ParamInfo) -> str:
    """``name=default`` and the other choices: ``gain=linear`` (exp, binary, elliot), in Markdown."""
    if info.required:
        return f"`{info.name}` (required)"
    if info.choices and info.default is None:  # its default is a convention's (AP's denominator: ap_denominator)
        return f"`{info.name}` ({', '.join(info.choices)})"
    if info.choices:
        others = [c for c in info.choices if c != info.default]
        return f"`{info.name}={info.default}`" + (f" ({', '.join(others)})" if others else "")
    return f"`{info.name}`" if info.default is None else f"`{info.name}={format_param(info.default)}`"


def aggregate_text(definition: MeasureDef) -> str:
    """How its per-query values make a run's value, or that it has one value per run."""
    per_query = {"mean": "mean", "sum": "sum", "gmean": "geometric mean", "count": "count"}[definition.aggregate]
    if definition.undefined_skipped:
        per_query += " over the queries it is defined for"
    if definition.system is not None and definition.system.when is None:
        return "one value per run"
    if definition.system is not None:
        return f"{per_query}; one value per run with `{definition.system.when}`"
    return per_query


def better_text(definition: MeasureDef) -> str:
    """Which way is better: higher, lower, nearer its target, or as a parameter says."""
    if definition.target is not None:
        return "nearer its target"
    if definition.higher_when is not None:
        usual, other = ("higher", "lower") if definition.higher_is_better else ("lower", "higher")
        return f"{usual} ({other} with `{definition.higher_when}`)"
    return "higher" if definition.higher_is_better else "lower"


def elsewhere_text(definition: MeasureDef) -> str:
    """trec_eval's and the other tools' names for it, with the parameters that reproduce each, in Markdown."""
    names = []
    if definition.trec_name or definition.trec_cut_name:
        spelled = " / ".join(
            f"`{n}`" for n in (definition.trec_name, definition.trec_cut_name and definition.trec_cut_name + "_k") if n
        )
        names.append(f"trec_eval {spelled}")
    for peer in definition.peer_names:
        tool = PEERS[peer.tool].tool.split(" (")[0]
        same = peer.spelling == definition.name
        names.append(f"{tool} `{peer.name}`" + ("" if same else f" = `{peer.spelling}`"))
    return "; ".join(names)


def table(family: str) -> str:
    """The Markdown table of the measures of ``family`` (one of :data:`~harness.measures.definition.FAMILIES`)."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}: one of {', '.join(FAMILIES)}")
    lines = ["| measure | meaning | elsewhere |", "| --- | --- | --- |"]
    for d in REGISTRY:
        if d.family != family:
            continue
        meaning = d.description + (f" *{d.citation}*" if d.citation else "")
        if d.params:
            meaning += "<br>parameters: " + ", ".join(param_text(p) for p in d.params)
        value = f"{aggregate_text(d)}; better {better_text(d)}"
        cells = (f"{name_text(d)}<br>{value}", meaning, elsewhere_text(d) or "-")
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines)


def render(page: str) -> str:
    """``page`` with each family's block holding that family's table."""
    return _BLOCK.sub(lambda m: m.group(1) + table(m["family"]) + "\n" + m.group(3), page)


def main(argv: list[str]) -> int:
    path = Path(argv[argv.index("--page") + 1]) if "--page" in argv else PAGE
    text = path.read_text()
    wanted = render(text)
    if "--check" in argv:
        if wanted != text:
            print(f"{path} is not what the measure definitions say: run python -m harness.measures.reference", file=sys.stderr)
            return 1
        return 0
    if wanted != text:
        path.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


__all__ = ["PAGE", "aggregate_text", "better_text", "elsewhere_text", "name_text", "param_text", "render", "table"]
