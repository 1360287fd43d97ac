"""Paths as the user sees them, whatever run or cache produced the result.

A result names files as the run that made it spelled them (relative to that run's working
directory, or absolute when the script was given so); a cached result may come from a run
given another spelling. Every report shows a path in one form: relative to the working
directory when the file is under it, else absolute; the script itself, outside the working
directory, as the user gave it. The same in every format, warm or cold.
"""

from __future__ import annotations

import os


def under(path: str, root: str) -> bool:
    """Whether `path` is `root` or a name inside it. Both spelt alike (normalised, both absolute
    or both relative): a text test, no link is resolved."""
    return path == root or path.startswith(os.path.join(root, ""))


def shown(path: str, cwd: str) -> str:
    """`path` in the user's view from `cwd` (module docstring)."""
    if not path or path == "-":
        return path
    full = os.path.normpath(os.path.join(cwd, path))
    if under(full, cwd):
        return os.path.relpath(full, cwd)
    return full


def relocate(results, given: list[str], cwd: str | None = None) -> None:
    """Every path of these results (the scripts, their findings and the places they relate) in
    the user's view, in place; `given`: the script paths as the user gave them."""
    from dataclasses import replace  # (here: discover.py, which the warm start runs, needs only `under`)

    cwd = os.path.abspath(cwd or os.getcwd())
    as_given = {os.path.normpath(os.path.join(cwd, g)): g for g in given if g != "-"}

    def view(path: str) -> str:
        full = os.path.normpath(os.path.join(cwd, path)) if path and path != "-" else path
        out = shown(path, cwd)
        return as_given.get(full, out) if os.path.isabs(out) else out

    for r in results:
        r.path = view(r.path)
        r.findings = [
            replace(f, path=view(f.path), related=tuple((view(p), *rest) for p, *rest in f.related))
            for f in r.findings
        ]
