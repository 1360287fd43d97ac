"""`# validate-scripts: disable=RULE[,RULE]` (this line or the next) and
`# validate-scripts: disable-file=RULE` (the whole file). A directive that
silences nothing is reported as `unused-suppression`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.findings import Finding
from ..core.values import Loc
from ..rules.tool.unused_suppression import UnusedSuppression

_DIRECTIVE = re.compile(r"#\s*validate-scripts:\s*(disable|disable-file)=([A-Za-z0-9_,-]+)")


@dataclass
class Directive:
    path: str
    line: int
    column: int
    rule: str
    whole_file: bool
    used: bool = False


def directives(path: str, text: str) -> list[Directive]:
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        for m in _DIRECTIVE.finditer(line):
            for rule in filter(None, m.group(2).split(",")):
                out.append(Directive(path, number, m.start() + 1, rule, m.group(1) == "disable-file"))
    return out


def apply(findings: list[Finding], sources: dict[str, str]) -> list[Finding]:
    """Drop suppressed findings; add a warning for each directive that was not needed."""
    table = [d for path, text in sources.items() for d in directives(path, text)]
    if not table:
        return findings
    kept = []
    for f in findings:
        hit = None
        for d in table:
            if d.path == f.path and d.rule == f.rule and (d.whole_file or f.line in (d.line, d.line + 1)):
                hit = d
                break
        if hit is None:
            kept.append(f)
        else:
            hit.used = True
    for d in table:
        if not d.used:
            loc = Loc(d.path, d.line, d.column)
            kept.append(UnusedSuppression.emit(loc, f"this directive silences nothing: no {d.rule} finding here"))
    return kept
