"""Versions a script's MindSpeed-Bridge header names and requirements-ascend.txt pins, for the
stack-drift rule (the stack a launch meets is decided in target.py).

Script headers list components as `#   - <Name> <ref>` lines under a
"MindSpeed-Bridge" heading; requirements-ascend.txt pins the same components
as `name @ git+https://host/org/<Name>.git@<ref>`. Both are read here so a test
(and a rule) can compare them.
"""

from __future__ import annotations

import os
import re

_HEADER_LINE = re.compile(r"^#\s+-\s+([A-Za-z][\w.-]*)\s+(\S+)\s*(?:#.*)?$")
_GIT_REQ = re.compile(r"^\s*[\w.-]+\s*@\s*git\+\S+/([^/@\s]+?)(?:\.git)?@(\S+)\s*$")


def header_components(text: str) -> dict[str, tuple[str, int]]:
    """{component: (ref, line)} from the header's MindSpeed-Bridge block."""
    out: dict[str, tuple[str, int]] = {}
    in_block = False
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.startswith("#"):
            if out or number > 200:
                break
            continue
        if "MindSpeed-Bridge" in line and "Requirements" in line:
            in_block = True
            continue
        if in_block:
            m = _HEADER_LINE.match(line)
            if m:
                out[m.group(1)] = (m.group(2), number)
            elif line.strip() == "#":
                in_block = False
    return out


def requirement_refs(text: str) -> dict[str, str]:
    """{repository name: ref} for the git+ lines of a requirements file."""
    out = {}
    for line in text.splitlines():
        m = _GIT_REQ.match(line.split(" #")[0])
        if m:
            out[m.group(1)] = m.group(2)
    return out


def drift(header: dict[str, tuple[str, int]], pins: dict[str, str]) -> list[tuple[str, str, str | None, int]]:
    """(component, header ref, pinned ref or None, line) for each disagreement."""
    lowered = {k.lower(): v for k, v in pins.items()}
    out = []
    for name, (ref, line) in header.items():
        pinned = lowered.get(name.lower())
        if pinned != ref:
            out.append((name, ref, pinned, line))
    return out


def find_upwards(start: str, name: str) -> str | None:
    """`name` in `start` or a folder above it, up to a repository root."""
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
