"""The user's repository a script belongs to: its root.

A project built on verl runs its scripts from its root (its README says `bash
scripts/run.sh` there), imports its own packages and its vendored verl from there, and
keeps its settings there. The root is the nearest folder at or above the script's that
holds one of MARKERS, as git, pip and ruff find a project: a `.git` (a clone or a
submodule's checkout), a `pyproject.toml`, a `setup.py` or a `setup.cfg`.
"""

from __future__ import annotations

import os

MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
_DEPTH = 64  # folders climbed at most (a path deeper than this is not a project's layout)


def root_of(path: str) -> str | None:
    """The repository root of a file or folder (module docstring), as an absolute path; None
    where no folder above it holds a marker (a script on its own, standard input)."""
    if path == "-":
        return None
    here = os.path.abspath(path)
    cur = here if os.path.isdir(here) else os.path.dirname(here)
    for _ in range(_DEPTH):
        if any(os.path.lexists(os.path.join(cur, marker)) for marker in MARKERS):
            return cur
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent
    return None
