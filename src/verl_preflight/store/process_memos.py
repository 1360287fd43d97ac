"""What a long-lived process forgets when a source it read has changed.

A run of the command line reads each of verl's sources once: the facts derived from them
(`derived.kept`), the syntax trees (`sources._pyast.parse_file`) and the other memos of the
package are kept for the rest of the process, and SOURCES_READ holds each file's digest as read.
The language server runs many checks in one process, while the user edits a vendored verl;
before each check it asks `sources_changed()`, and when one has, `forget_all()` drops every
memo of the package (each `lru_cache` and `@kept` function's `cache_clear`, of a module or of a
class in it) and what was read. The next check reads the files as they are now; what the disk
cache keeps is checked against their digests as always.
"""

from __future__ import annotations

import sys

from ..core.source import SOURCES_READ, digest_of

PACKAGE = __name__.split(".")[0]  # the package (this module is in its store/)


def sources_changed() -> bool:
    """Whether a source this process read (a file, a folder's listing) is not as read now."""
    return any(digest_of(path) != digest for path, digest in list(SOURCES_READ.items()))


def forget_all() -> None:
    """Every memo of the package's loaded modules cleared, and the sources read forgotten."""
    from . import derived

    for name, module in list(sys.modules.items()):
        if name != PACKAGE and not name.startswith(PACKAGE + "."):
            continue
        for value in list(vars(module).values()):
            if getattr(value, "__module__", None) != name:
                continue  # (imported from elsewhere: cleared in its own module)
            owners = [value, *vars(value).values()] if isinstance(value, type) else [value]
            for owner in owners:
                clear = getattr(owner, "cache_clear", None)
                if callable(clear):
                    clear()
    SOURCES_READ.clear()
    derived.forget_digests()
