"""Versions named in a script's MindSpeed-Bridge header must match requirements-ascend.txt."""

from __future__ import annotations

import os

from ...findings import Finding
from ...stack import drift, header_components, requirement_refs

SCOPE = "script"


def _find_upwards(start: str, name: str) -> str | None:
    cur = os.path.abspath(start)
    for _ in range(32):
        candidate = os.path.join(cur, name)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(cur)
        if parent == cur or os.path.isdir(os.path.join(cur, ".git")):
            return None
        cur = parent
    return None


def check(policy, ctx) -> list[Finding]:
    script = ctx.main_script
    header = header_components(script.source.decode("utf-8", "replace"))
    if not header:
        return []
    req = _find_upwards(
        os.path.dirname(script.path) or ".", policy.params.get("requirements", "requirements-ascend.txt")
    )
    if req is None:
        return []
    with open(req, encoding="utf-8") as fh:
        pins = requirement_refs(fh.read())
    out = []
    for name, ref, pinned, line in drift(header, pins):
        what = f"pinned at {pinned}" if pinned else "not pinned"
        out.append(
            Finding(
                script.path,
                line,
                1,
                policy.id,
                policy.severity,
                f"the header names {name} {ref}, {os.path.basename(req)} has it {what}",
            )
        )
    return out
