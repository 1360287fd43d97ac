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
    also: tuple = ()  # (Finding, ...): what other stacks, profiles or rules say of the same mistake here

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


RANK = {s: i for i, s in enumerate(SEVERITIES)}


def one_per_mistake(findings, traits=lambda rule: (None, "value")) -> list[Finding]:
    """One finding per mistake per place: the findings of one rule about one key at one place (one
    per stack of the profiles), and those of the rules that say the key cannot be there
    (`traits(rule)` is (stage, concern); concern "key": no such key, no such field, the wrong arm), become the most
    severe of them, with the others in `also` (their rule, severity, message and profiles). Of the
    findings of no key at one word, what Hydra says of a word follows what bash made of it
    (by stage: a blank after a backslash, then Hydra's parse error of that blank). Other
    findings stay as they are: two relations a value breaks are two mistakes."""
    known = {f.rule: traits(f.rule) for f in findings}  # each rule looked up once

    def stage_of(rule):
        return known[rule][0]

    def concern_of(rule):
        return known[rule][1]

    at_word: dict[tuple, set] = {}
    for f in findings:
        if f.key is None and f.line:
            at_word.setdefault((f.path, f.line, f.column), set()).add(stage_of(f.rule))
    groups: dict[tuple, list[Finding]] = {}
    order = []
    for f in findings:
        word = (f.path, f.line, f.column)
        if f.key is not None and f.line:
            k = (*word, f.key, "key" if concern_of(f.rule) == "key" else f.rule)
        elif f.line and stage_of(f.rule) in ("bash", "hydra") and {"bash", "hydra"} <= at_word.get(word, set()):
            k = (*word, None)
        else:
            k = (id(f),)
        if k not in groups:
            order.append(k)
        groups.setdefault(k, []).append(f)
    out = []
    for k in order:
        group = groups[k]
        if len(group) == 1:
            out.append(group[0])
            continue
        # the first of the most severe; at a word, bash's view (the cause) first
        word_level = len(k) == 4 and k[-1] is None
        head = min(group, key=lambda f: (stage_of(f.rule) != "bash" if word_level else 0, RANK.get(f.severity, len(RANK))))
        # a finding with its own fix stays itself: --fix reports and refuses fixes by their rule
        others = tuple(f for f in group if f is not head and f.fix in (None, head.fix))
        out.append(replace(head, also=others) if others else head)
        out.extend(f for f in group if f is not head and f not in others)
    return out
