"""Versions a script's MindSpeed-Bridge header names and requirements-ascend.txt pins, for the
stack-drift rule (the stack a launch meets is decided in target.py).

Script headers list components as `#   - <Name> <ref>` lines under a
"MindSpeed-Bridge" heading; requirements-ascend.txt pins the same components
as `name @ git+https://host/org/<Name>.git@<ref>`, a component the install
script builds (no pip requirement) as a `# build: name @ git+...@<ref>` line,
and a commit taken from a branch may say so: `...@<sha>  # branch core_r0.18.0`
(a header may then name either). Both are read here so a test (and a rule) can
compare them.
"""

from __future__ import annotations

import os
import re

_HEADER_LINE = re.compile(r"^#\s+-\s+([A-Za-z][\w.-]*)\s+(\S+)\s*(?:#.*)?$")
_GIT_REQ = re.compile(r"^\s*[\w.-]+\s*@\s*git\+\S+/([^/@\s]+?)(?:\.git)?@(\S+)\s*$")
_BUILD = re.compile(r"^\s*#\s*build:\s*")
_BRANCH = re.compile(r"#\s*branch\s+(\S+)")


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


def _git_lines(text: str):
    """(repository name, ref, the line's comment) for each git+ requirement or `# build:` line."""
    for line in text.splitlines():
        m = _BUILD.match(line)
        body = line[m.end() :] if m else line
        requirement, _, comment = body.partition(" #")
        m = _GIT_REQ.match(requirement)
        if m:
            yield m.group(1), m.group(2), comment


def requirement_refs(text: str) -> dict[str, str]:
    """{repository name: ref} for the git+ lines (and `# build:` lines) of a requirements file."""
    return {repo: ref for repo, ref, _ in _git_lines(text)}


def branch_note(comment: str) -> str | None:
    """The branch a requirement line's comment (the text after its ` #`) says the pinned commit
    comes from: `branch core_r0.18.0`."""
    m = _BRANCH.search("#" + comment)
    return m.group(1) if m else None


def requirement_branches(text: str) -> dict[str, str]:
    """{repository name: branch} for the pinned commits whose line names the branch they come from."""
    out = {}
    for repo, _, comment in _git_lines(text):
        branch = branch_note(comment)
        if branch:
            out[repo] = branch
    return out


def drift(
    header: dict[str, tuple[str, int]], pins: dict[str, str], branches: dict[str, str] | None = None
) -> list[tuple[str, str, str | None, int]]:
    """(component, header ref, pinned ref or None, line) for each disagreement. A header may name
    the pinned commit or the branch its requirement line says the commit comes from."""
    lowered = {k.lower(): v for k, v in pins.items()}
    aliases = {k.lower(): v for k, v in (branches or {}).items()}
    out = []
    for name, (ref, line) in header.items():
        pinned = lowered.get(name.lower())
        if pinned != ref and (pinned is None or aliases.get(name.lower()) != ref):
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
