"""Edits: the repair a fixable rule attaches to its finding, and where in a file it goes.

Records only, shared by the rules (which build a `Fix`), the findings (which carry it), the
pipeline (fix.py ties it to the source) and the application (which writes the files).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SAFE_REPLACEMENT = re.compile(r"[\w.+\-/@]*")  # needs no quoting in any context it lands in


@dataclass(frozen=True)
class SourceEdit:
    """Bytes [start, end) of the file at `path` become `replacement`."""

    path: str
    start: int
    end: int
    replacement: str


@dataclass(frozen=True)
class Fix:
    """A rule's repair of one override: its characters [start, end) (of `text`, the override as
    checked) become `replacement`; its first `anchor` characters (the key, and what changes) must
    be literal text in the source. `resolve` sets `edit` (where in the file) or `refused` (why not)."""

    text: str
    start: int
    end: int
    replacement: str
    anchor: int
    key: str | None = None  # the key of the override it repairs (a fix is matched by place and key)
    edit: SourceEdit | None = None
    refused: str | None = None
    unsafe: str | None = None  # why the rule cannot promise the script is right after it (applied with --unsafe-fixes)

    @staticmethod
    def drop_plus(text: str, key: str) -> Fix | None:
        """`+key=v` -> `key=v`."""
        if not text.startswith("+" + key) or text.startswith("++"):
            return None
        return Fix(text, 0, 1, "", 1 + len(key), key)

    @staticmethod
    def add_plus(text: str, key: str) -> Fix | None:
        """`key=v` -> `+key=v`."""
        if not text.startswith(key + "="):
            return None
        return Fix(text, 0, 0, "+", len(key), key)

    @staticmethod
    def rename_key(text: str, key: str, new_key: str) -> Fix | None:
        """`key=v` -> `new_key=v`."""
        if not text.startswith(key + "=") or not _SAFE_REPLACEMENT.fullmatch(new_key):
            return None
        return Fix(text, 0, len(key), new_key, len(key), key)

    @staticmethod
    def set_value(text: str, value: str) -> Fix | None:
        """`[+[+]]key=old` -> `[+[+]]key=value`."""
        eq = text.find("=")
        if eq < 0 or not _SAFE_REPLACEMENT.fullmatch(value):
            return None
        return Fix(text, eq + 1, len(text), value, len(text), text[:eq].lstrip("+~"))


def apply_edits(data: bytes, edits) -> bytes:
    """The bytes with non-overlapping edits made (edits in file order)."""
    out, pos = [], 0
    for e in edits:
        out += [data[pos : e.start], e.replacement.encode()]
        pos = e.end
    out.append(data[pos:])
    return b"".join(out)
