"""THE parser for measure names, in ir_measures' syntax.

``Name``, ``Name@k``, ``Name(param=value, ...)@k``; values are Python literals
(numbers, quoted strings, tuples, ``{level: gain}`` dicts), never code.

>>> str(parse_measure("nDCG@10")), str(parse_measure("P(rel=2)@5"))
('nDCG@10', 'P(rel=2)@5')
>>> str(parse_measure("ndcg(gains={0:0,1:1,2:3,3:7})@10"))
'nDCG(gains={0:0,1:1,2:3,3:7})@10'
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Callable

from harness.errors import MeasureError
from harness.measures.registry import REGISTRY, MeasureDef
from harness.measures.spec import Measure, ParamValue

_SHAPE = re.compile(r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<params>\(.*\))?\s*(?:@\s*(?P<cutoff>[^\s@()]+))?\s*$", re.S)


def lookup(name: str) -> MeasureDef:
    """The definition for a name or alias (case-insensitive), or a MeasureError with a hint."""
    found = REGISTRY.get(name)
    if found is not None:
        return found
    names = REGISTRY.all_names()
    close = difflib.get_close_matches(name.lower(), [n.lower() for n in names], n=3, cutoff=0.5)
    spelled = [n for n in names if n.lower() in close]
    hint = f"did you mean {', '.join(spelled)}?" if spelled else "run 'harness measures' to list every measure"
    raise MeasureError(f"unknown measure {name!r}", hint=hint)


def _literal(node: ast.expr, text: str) -> object:
    if isinstance(node, ast.Name):  # a bare word is a string: gain=exp
        return node.id
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError):
        raise MeasureError(
            f"parameter value {ast.get_source_segment(text, node)!r} is not a literal",
            hint="use numbers, quoted strings or {level: gain}",
        ) from None


def parse_measure(text: str) -> Measure:
    """Parse one measure name into its canonical, validated value."""
    match = _SHAPE.match(text)
    if match is None:
        raise MeasureError(f"cannot read measure {text!r}", hint="write it like nDCG@10, AP, P(rel=2)@5")
    definition = lookup(match["name"])
    raw: dict[str, object] = {}
    if match["params"]:
        call_text = "f" + match["params"]
        try:
            call = ast.parse(call_text, mode="eval").body
        except SyntaxError:
            raise MeasureError(f"cannot read the parameters of {text!r}", hint="write them as (name=value, ...)") from None
        if not isinstance(call, ast.Call) or call.args:
            raise MeasureError(f"parameters of {text!r} must be named", hint="write them as (name=value, ...)")
        for keyword in call.keywords:
            if keyword.arg is None:
                raise MeasureError(f"parameters of {text!r} must be named", hint="write them as (name=value, ...)")
            raw[keyword.arg] = _literal(keyword.value, call_text)
    if "dcg" in raw and any(p.name == "gain" for p in definition.params):  # ir_measures' spelling of the gain
        dcg = raw.pop("dcg")
        if dcg not in ("log2", "exp-log2"):
            raise MeasureError(f"dcg of {definition.name} must be 'log2' or 'exp-log2', got {dcg!r}",
                               hint="dcg='exp-log2' is gain 2^rel - 1, as gain='exp'")  # fmt: skip
        if dcg == "exp-log2":
            raw["gain"] = "exp"
    cutoff: int | None = None
    if match["cutoff"] is not None:
        try:
            cutoff = int(match["cutoff"])
        except ValueError:
            if definition.name == "IPrec":  # ir_measures: IPrec@0.5 is the interpolated precision at recall 0.5
                try:
                    raw["recall"] = float(match["cutoff"])
                except ValueError:
                    pass
                else:
                    return definition.make(raw, None)
            raise MeasureError(f"cutoff of {text!r} must be a whole number", hint=f"write {definition.name}@10") from None
    return definition.make(raw, cutoff)


def split_measures(text: str) -> list[str]:
    """Measure names separated by commas or spaces, outside parentheses and braces.

    >>> split_measures("nDCG@10,P@5 nDCG(gains={0:0,1:1})@10")
    ['nDCG@10', 'P@5', 'nDCG(gains={0:0,1:1})@10']
    """
    parts, depth, current = [], 0, ""
    for char in text:
        depth += int(char in "({[")
        depth -= int(char in ")}]")
        if depth == 0 and (char == "," or char.isspace()):
            if current:
                parts.append(current)
            current = ""
            continue
        current += char
    if current:
        parts.append(current)
    return parts


def parse_measures(texts: list[str] | tuple[str, ...]) -> tuple[Measure, ...]:
    """Parse many, keeping the given order and dropping repeats."""
    out: list[Measure] = []
    for text in texts:
        measure = parse_measure(text)
        if measure not in out:
            out.append(measure)
    return tuple(out)


__all__ = ["ParamValue", "lookup", "parse_measure", "parse_measures", "split_measures"]


def labeller(gain_schemes: dict[str, str]) -> Callable[[str], str]:
    """Display names: a gain parameter that is one of the config's schemes shows as its name.

    >>> labeller({"linear": "linear", "graded": "gains={1:0,2:3}"})("nDCG(gains={1:0,2:3})@10")
    'nDCG@10 [graded]'
    """
    params = {text: name for name, text in gain_schemes.items() if text and text != "linear"}

    def label(measure: str) -> str:
        for text, name in params.items():
            if f"({text})" in measure:
                return measure.replace(f"({text})", "") + f" [{name}]"
        return measure

    return label
