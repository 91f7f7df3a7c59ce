"""trec_eval's own measure names and parameter syntax, for ``harness eval -m``.

``P.5,10`` -> P@5, P@10; ``ndcg.1=3,2=9`` -> nDCG with a custom gain table;
``iprec_at_recall..10,.5`` -> IPrec at 0.1 and 0.5; ``all_trec`` and
``official`` name trec_eval's measure sets. Each item keeps the name trec_eval
prints for it (``P_5``, ``ndcg_1=3,2=9``), and items come out in trec_eval's
table order.

>>> [i.display for i in parse_trec_measure("P.10,5")]
['P_5', 'P_10']
>>> [str(i.measure) for i in parse_trec_measure("ndcg.1=3,2=9")]
['nDCG(gains={1:3,2:9})']
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import MeasureError
from harness.measures.registry import ELEVEN_POINTS, REGISTRY
from harness.measures.spec import Measure

_STD_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass(frozen=True)
class TrecItem:
    """One printed row kind: ``display`` is trec_eval's name; ``measure`` None for runid/relstring."""

    order: int
    display: str
    measure: Measure | None
    per_query: bool = True  # printed in -q rows
    in_summary: bool = True  # printed in the 'all' rows
    relstring_length: int = 0


# name -> (kind, our measure name, default parameters)
_TABLE: list[tuple[str, str, str, tuple[float, ...]]] = [
    ("runid", "runid", "", ()),
    ("num_q", "plain", "NumQ", ()),
    ("num_ret", "plain", "NumRet", ()),
    ("num_rel", "plain", "NumRel", ()),
    ("num_rel_ret", "plain", "NumRelRet", ()),
    ("map", "plain", "AP", ()),
    ("gm_map", "plain", "GMAP", ()),
    ("Rprec", "plain", "Rprec", ()),
    ("bpref", "plain", "Bpref", ()),
    ("recip_rank", "plain", "RR", ()),
    ("iprec_at_recall", "float_cut", "IPrec", ELEVEN_POINTS),
    ("P", "cut", "P", _STD_CUTS),
    ("relstring", "relstring", "", (10,)),
    ("recall", "cut", "R", _STD_CUTS),
    ("infAP", "plain", "infAP", ()),
    ("gm_bpref", "plain", "GMBpref", ()),
    ("Rprec_mult", "float_cut", "RprecMult", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    ("utility", "utility", "Utility", ()),
    ("11pt_avg", "recalls", "IPrecAvg", ()),
    ("binG", "plain", "binG", ()),
    ("G", "gains", "G", ()),
    ("ndcg", "gains", "nDCG", ()),
    ("dcg", "gains", "DCG", ()),
    ("ideal_dcg", "gains", "IDCG", ()),
    ("ndcg_rel", "gains", "nDCGRel", ()),
    ("Rndcg", "gains", "RnDCG", ()),
    ("ndcg_cut", "cut", "nDCG", _STD_CUTS),
    ("map_cut", "cut", "AP", _STD_CUTS),
    ("relative_P", "cut", "RelP", _STD_CUTS),
    ("success", "cut", "Success", (1, 5, 10)),
    ("set_P", "plain", "SetP", ()),
    ("set_relative_P", "plain", "SetRelP", ()),
    ("set_recall", "plain", "SetR", ()),
    ("set_map", "plain", "SetAP", ()),
    ("set_F", "beta", "SetF", ()),
    ("num_nonrel_judged_ret", "plain", "NumNonRelJudgedRet", ()),
    ("rbp", "rbp", "RBP", ()),
    ("rbp_resid", "plain", "RBPResid", ()),
    ("unj", "cut", "Unj", (5, 10, 20)),
]
_ORDER = {name: i for i, (name, *_) in enumerate(_TABLE)}
_BY_NAME = {name: (kind, ours, defaults) for name, kind, ours, defaults in _TABLE}
TREC_NAMES = frozenset(_BY_NAME)  # every trec_eval measure name harness understands
TREC_MEASURES = tuple(dict.fromkeys(ours for _, _, ours, _ in _TABLE if ours))  # the harness measures they name
_UNSUPPORTED_IN_TREC_SETS = {"dcg", "ideal_dcg"}  # v10 measures outside all_trec

SETS = {
    "official": [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
    ],
    "all_trec": [name for name, *_ in _TABLE if name not in _UNSUPPORTED_IN_TREC_SETS],
}


def _numbers(text: str, spec: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x != ""]
    except ValueError:
        raise MeasureError(
            f"cannot read the parameters of trec_eval measure {spec!r}", hint="write e.g. P.5,10 or iprec_at_recall.0.1,0.5"
        ) from None


def _gain_table(text: str, spec: str) -> dict[float, float]:
    table: dict[float, float] = {}
    for part in text.split(","):
        level, sep, gain = part.partition("=")
        try:
            table[float(int(level))] = float(gain)
        except ValueError:
            raise MeasureError(
                f"cannot read gain {part!r} in {spec!r}", hint="write level=gain pairs, e.g. ndcg.1=1,2=3,3=7"
            ) from None
        if not sep:
            raise MeasureError(f"cannot read gain {part!r} in {spec!r}", hint="write level=gain pairs, e.g. ndcg.1=1,2=3,3=7")
    return table


def _item(name: str, display: str, measure: Measure | None, **kw: object) -> TrecItem:
    return TrecItem(_ORDER[name], display, measure, **kw)  # type: ignore[arg-type]


def parse_trec_measure(spec: str) -> list[TrecItem]:
    """Items for one ``-m`` argument in trec_eval's syntax."""
    if spec in SETS:
        return [item for name in SETS[spec] for item in parse_trec_measure(name)]
    name, dot, params = spec.partition(".")
    if name not in _BY_NAME:
        raise MeasureError(
            f"unknown trec_eval measure {name!r}",
            hint="use a trec_eval name (P, map, ndcg_cut, ...) or one from 'harness measures'",
        )
    kind, ours, defaults = _BY_NAME[name]
    definition = REGISTRY[ours] if ours else None
    given = bool(dot and params)
    if kind == "runid":
        return [_item(name, "runid", None, per_query=False)]
    if kind == "relstring":
        length = int(_numbers(params, spec)[0]) if given else 10
        display = f"relstring_{length}" if given else "relstring"
        return [_item(name, display, None, in_summary=False, relstring_length=length)]
    assert definition is not None
    if kind == "plain":
        gm = definition.aggregate == "gmean"
        count = definition.aggregate == "count"
        return [_item(name, name, definition.make({}, None), per_query=not (gm or count))]
    if kind == "cut":
        cuts = sorted(
            {int(c) for c in (_numbers(params, spec) if given else defaults)}
        )  # trec_eval reads long cutoffs: 23.4 -> 23
        return [_item(name, f"{name}_{c}", definition.make({}, c)) for c in cuts]
    if kind == "float_cut":
        key = "recall" if ours == "IPrec" else "mult"
        levels = sorted(set(_numbers(params, spec) if given else defaults))
        return [_item(name, f"{name}_{v:.2f}", definition.make({key: v}, None)) for v in levels]
    display = f"{name}_{params}" if given else name
    raw: dict[str, object] = {}
    if kind == "utility":
        coefficients = _numbers(params, spec) if given else [1.0, -1.0, 0.0, 0.0]
        if len(coefficients) != 4:
            raise MeasureError(f"utility takes 4 coefficients, got {len(coefficients)}", hint="write utility.1,-1,0,0")
        return [_item(name, display, definition.make(dict(zip("abcd", coefficients, strict=True)), None))]
    if kind == "recalls":
        if given:
            raw["recalls"] = tuple(_numbers(params, spec))
        return [_item(name, display, definition.make(raw, None))]
    if kind == "gains":
        if given:
            raw["gains"] = _gain_table(params, spec)
        return [_item(name, display, definition.make(raw, None))]
    if kind == "beta":
        if given:
            raw["beta"] = _numbers(params, spec)[0]
        return [_item(name, display, definition.make(raw, None))]
    if kind == "rbp":
        if given:
            for part in params.split(","):
                key, _, value = part.partition("=")
                if key != "p":
                    raise MeasureError(f"rbp takes only p=..., got {part!r}", hint="write rbp.p=0.8")
                raw["p"] = _numbers(value, spec)[0]
        return [_item(name, display, definition.make(raw, None))]
    raise AssertionError(kind)
