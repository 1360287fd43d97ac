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
