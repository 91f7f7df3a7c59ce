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
from harness.measures.registry import PEER_NAMES, REGISTRY, MeasureDef
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


# another tool's name with its cutoff: RecBole's itemcoverage@10, ranx's r-precision, MLflow's precision_at_10
_PEER_SHAPE = re.compile(r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_\-]*?)\s*(?:@\s*(?P<at>[0-9]+)|_at_(?P<key>[0-9]+))?\s*$")


def _peer_spelling(text: str) -> str | None:
    """harness's spelling of another tool's name for a measure (:data:`~harness.measures.registry.PEER_NAMES`) or of
    an MLflow metric key harness logs (``ndcg_at_10``, ``p_at_5``: a measure without parameters); None for others.

    >>> _peer_spelling("ItemCoverage@10"), _peer_spelling("precision_at_5"), _peer_spelling("ndcg_at_10")
    ('Coverage(catalog=recbole)@10', 'P@5', 'nDCG@10')
    >>> _peer_spelling("nDCG@10") is None  # harness's own names are read as they are
    True
    """
    match = _PEER_SHAPE.match(text)
    if match is None:
        return None
    name, cutoff = match["name"], match["at"] or match["key"]
    if match["key"] is None and REGISTRY.get(name) is not None:
        return None
    known = next((v for k, v in PEER_NAMES.items() if k.lower() == name.lower()), None)
    spelling = known[0] if known is not None else None
    if spelling is None and match["at"] is None:  # precision_at_10 (MLflow, msrec), ndcg_at_10, rbp_p_0p8 (harness's keys)
        found = REGISTRY.get(name)
        spelling = found.name if found is not None else _from_key(name, cutoff)
    if spelling is None:
        return None
    return f"{spelling}@{cutoff}" if cutoff else spelling


def _from_key(body: str, cutoff: str | None) -> str | None:
    """The measure with parameters whose MLflow key is ``<body>_at_<cutoff>`` (``p_rel_2`` -> ``P(rel=2)``): keys
    spell each parameter as ``_<name>_<value>`` (:meth:`Measure.mlflow_key`), read back here for words and numbers.

    >>> _from_key("p_rel_2", "5"), _from_key("rbp_p_0p8", None), _from_key("ndcg_gains_1-0_2-3", "10")
    ('P(rel=2)', 'RBP(p=0.8)', None)
    """
    for definition in REGISTRY:
        key = definition.name.lower()
        if not body.startswith(key + "_"):
            continue
        names = sorted((p.name for p in definition.params), key=len, reverse=True)
        rest, params = body[len(key) + 1 :], []
        while rest:
            param = next((n for n in names if rest.startswith(n.lower() + "_")), None)
            if param is None:
                break
            rest = rest[len(param) + 1 :]
            following = [rest.find("_" + n.lower() + "_") for n in names]
            end = min([i for i in following if i > 0], default=len(rest))
            value, rest = rest[:end], rest[end + 1 :]
            number = re.fullmatch(r"m?[0-9]+(p[0-9]+)?", value)
            params.append(f"{param}={value.replace('m', '-', 1).replace('p', '.') if number else value}")
        if rest or not params:
            continue
        text = f"{definition.name}({','.join(params)})"
        try:
            measure = parse_measure(f"{text}@{cutoff}" if cutoff else text)
        except MeasureError:
            continue
        if measure.mlflow_key() == (f"{body}_at_{cutoff}" if cutoff else body):
            return text
    return None


def parse_measure(text: str) -> Measure:
    """Parse one measure name into its canonical, validated value; other tools' names for harness's measures too
    (RecBole's ``giniindex@10``, Microsoft Recommenders' ``catalog_coverage``, MLflow keys like ``ndcg_at_10``).

    Parameters
    ----------
    text : str
        The name: ``nDCG@10``, ``P(rel=2)@5``, or a peer's spelling (``ndcg_at_10``, ``giniindex@10``).

    Returns
    -------
    Measure
        The measure, its parameters checked against the registry.

    Raises
    ------
    MeasureError
        An unknown name or parameter, with the names it may have meant.

    Examples
    --------
    >>> str(parse_measure("nDCG@10")), str(parse_measure("ndcg_at_10")), str(parse_measure("P(rel=2)@5"))
    ('nDCG@10', 'nDCG@10', 'P(rel=2)@5')
    """
    text = _peer_spelling(text) or text
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
            raise MeasureError(
                f"dcg of {definition.name} must be 'log2' or 'exp-log2', got {dcg!r}",
                hint="dcg='exp-log2' is gain 2^rel - 1, as gain='exp'",
            )
        if dcg == "exp-log2":
            raw["gain"] = "exp"
    cutoff: int | None = None
    if match["cutoff"] is not None:
        try:
            cutoff = int(match["cutoff"])
        except ValueError:
            if definition.cutoff_param is not None:  # ir_measures: IPrec@0.5 is the interpolated precision at recall 0.5
                try:
                    raw[definition.cutoff_param] = float(match["cutoff"])
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
