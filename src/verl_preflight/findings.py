"""Findings: what the validator reports, and how per-profile findings merge."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .edits import Fix

SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    column: int
    rule: str
    severity: str
    message: str
    key: str | None = None
    profiles: tuple = field(default=())  # (values.Profile, ...) in which it holds; () for script-wide
    fix: Fix | None = None  # how `--fix` repairs it (fix.py), set by a fixable rule
    related: tuple = ()  # ((path, line, column, key), ...): the other overrides a mistake of several involves

    @staticmethod
    def at(loc, rule: str, severity: str, message: str, key: str | None = None, fix: Fix | None = None) -> Finding:
        if loc is None:
            return Finding("", 0, 0, rule, severity, message, key, fix=fix)
        return Finding(loc.path, loc.line, loc.col, rule, severity, message, key, fix=fix)

    def with_related(self, locs) -> Finding:
        """The finding naming other places of the same mistake ((loc, key) pairs)."""
        return replace(self, related=tuple((loc.path, loc.line, loc.col, key) for loc, key in locs))

    def in_profile(self, profile) -> Finding:
        return replace(self, profiles=(profile,))

    def sort_key(self):
        return (self.path, self.line, self.column, self.rule, self.message)


def merge_findings(findings) -> list[Finding]:
    """Merge findings that differ only in their profile; keep profile order."""
    merged: dict[tuple, list] = {}
    for f in findings:
        k = (f.path, f.line, f.column, f.rule, f.severity, f.message, f.key, f.fix, f.related)
        bucket = merged.setdefault(k, [])
        for p in f.profiles:
            if p not in bucket:
                bucket.append(p)
    out = [Finding(*k[:7], tuple(v), k[7], k[8]) for k, v in merged.items()]
    out.sort(key=Finding.sort_key)
    return out
