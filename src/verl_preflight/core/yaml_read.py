"""YAML read the safe way, with libyaml's parser when PyYAML was built with it.

PyYAML's pure-Python scanner costs about 20 ms on the shipped model table alone, a tenth of a
one-file check; `CSafeLoader` parses the same documents into the same values (the resolvers
and constructors are PyYAML's Python ones either way) and its errors carry the same marks.
"""

from __future__ import annotations

import yaml

SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(text: str):
    """`yaml.safe_load(text)`, parsed by libyaml where it is there."""
    return yaml.load(text, Loader=SAFE_LOADER)  # noqa: S506 (a safe loader)


def compose(text: str):
    """`yaml.compose(text)` with the safe loader: the node tree, for line numbers."""
    return yaml.compose(text, Loader=SAFE_LOADER)


MAX_EXPANDED_NODES = 1_000_000  # nodes a YAML document may stand for once its aliases are expanded


def expanded_nodes(text: str) -> int | None:
    """How many nodes the document stands for with every alias expanded (an alias bomb of 8
    levels of 10 is 10**8 from a few hundred bytes), counted on the node graph without
    expanding it; None past MAX_EXPANDED_NODES or for a document that contains itself."""
    root = compose(text)
    sizes: dict[int, int | None] = {}

    def size(node) -> int | None:
        known = sizes.get(id(node), 0)
        if known != 0:
            return known
        sizes[id(node)] = None  # in progress: met again, the document contains itself
        total = 1
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            children = []
        for child in children:
            n = size(child)
            if n is None or total + n > MAX_EXPANDED_NODES:
                return None
            total += n
        sizes[id(node)] = total
        return total

    return size(root) if root is not None else 0
