"""The YAML documents this package ships (the policy schema, the model table), parsed once per
machine: a check that finds them kept imports no PyYAML for them (its import and the parse
were a tenth of a one-file check).

Their bytes are part of the tool's fingerprint (file_digests.tool_fingerprint), which keys every
derived fact, so a document kept by its path alone is the document of these very bytes.
"""

from __future__ import annotations

import os

from ..store.derived import kept_by_arguments

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package, above core/


@kept_by_arguments
def document(name: str):
    """The document of the shipped file `name` (a path relative to the package, `/`-separated)."""
    from .yaml_read import load

    with open(os.path.join(PACKAGE, *name.split("/")), encoding="utf-8") as fh:
        return load(fh.read())
