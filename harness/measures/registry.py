"""The registry: every measure's definition, gathered from the family modules in the order they are listed.

``harness measures``, the "did you mean" hints, the other tools' names (:data:`PEER_NAMES`) and ``docs/measures.md``
are written from it; nothing else dispatches on a measure's name.

>>> REGISTRY.get("map").name, REGISTRY["nDCG"].trec_cut_name
('AP', 'ndcg_cut')
>>> PEER_NAMES["ItemCoverage"]
('Coverage(catalog=recbole)', 'recbole')
"""

from __future__ import annotations

from harness.measures import accuracy, beyond_accuracy, exposure, fairness, intent_aware
from harness.measures.definition import ELEVEN_POINTS, MeasureDef, Registry

REGISTRY = Registry(
    (*accuracy.MEASURES, *beyond_accuracy.MEASURES, *fairness.MEASURES, *intent_aware.MEASURES, *exposure.MEASURES)
)

# Other tools' names read as harness's measures, as the tools spell them (matched without regard to case): the name ->
# (harness's spelling, the tool). A name takes the tool's cutoff as @k (RecBole's ``ItemCoverage@10``) or as _at_k
# (Microsoft Recommenders' and MLflow's ``precision_at_10``). Names harness has already (RecBole's ``MAP``, ranx's
# ``ndcg``) keep harness's meaning: the definitions read only the names they mark ``read``.
PEER_NAMES: dict[str, tuple[str, str]] = {
    peer.name: (peer.spelling, peer.tool) for definition in REGISTRY for peer in definition.peer_names if peer.read
}

__all__ = ["ELEVEN_POINTS", "PEER_NAMES", "REGISTRY", "MeasureDef"]
