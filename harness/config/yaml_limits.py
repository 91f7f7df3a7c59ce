"""YAML read within bounds: a config (or a results folder's record of one) cannot exhaust memory, time or the stack.

PyYAML composes nested collections recursively (a document nested 100,000 deep overflows the stack) and shares
aliased nodes, so a few hundred bytes of anchors and aliases ("billion laughs") stand for billions of values once
walked. The events are read first, without building anything, to bound the size, the nesting and the aliases; the
composed graph is then measured (each shared node counted as often as it is reached, without walking it twice) so
that what the config stands for is bounded too. The limits are far above any real config; each error names the
file, the line and the limit.

>>> compose_bounded("a: [1, 2]", Path("c.yaml")).value[0][0].value
'a'
>>> compose_bounded("a: &x [1]\\nb: *x", Path("c.yaml")).value[1][1].value[0].value
'1'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from harness.errors import ConfigError

MAX_BYTES = 16 * 2**20  # a config of 16 MB would hold about 100,000 systems
MAX_DEPTH = 64  # collections inside collections; a config nests about 6 deep
MAX_NODES = 1_000_000  # values the document stands for once every alias is followed
_HINT = "a config is a few levels of keys and lists; write the values out (or split the file) within these limits"


def compose_bounded(text: str, source: Path) -> yaml.Node | None:
    """``yaml.compose(text)`` with the SafeLoader, refusing a document beyond the limits (ConfigError)."""
    if len(text) > MAX_BYTES:
        raise ConfigError(
            f"the config is {len(text)} characters, more than the {MAX_BYTES} harness reads", path=source, hint=_HINT
        )
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise ConfigError(
                    f"the config nests collections more than {MAX_DEPTH} deep",
                    path=source,
                    line=event.start_mark.line + 1 if event.start_mark else None,
                    hint=_HINT,
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    if node is not None:
        _count(node, source)
    return node


def load_bounded(text: str, source: Path) -> Any:
    """``yaml.safe_load(text)`` within the same limits."""
    node = compose_bounded(text, source)
    return None if node is None else yaml.SafeLoader(text).construct_document(node)


def _count(root: yaml.Node, source: Path) -> int:
    """How many values ``root`` stands for, each alias followed; iterative, each shared node measured once."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if children_done:
            open_nodes.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[id(node)] > MAX_NODES:
                raise ConfigError(
                    f"the config stands for more than {MAX_NODES} values once its aliases (*name) are followed",
                    path=source,
                    line=node.start_mark.line + 1,
                    hint=_HINT,
                )
            continue
        if id(node) in open_nodes:
            raise ConfigError(
                "an alias (*name) refers to a collection that holds it",
                path=source,
                line=node.start_mark.line + 1,
                hint="an anchor's value cannot contain its own alias",
            )
        open_nodes.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
    return sizes[id(root)]


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []
