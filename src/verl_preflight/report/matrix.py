"""A compatibility matrix: which scripts compose on which verl release, and the findings
that differ between releases."""

from __future__ import annotations

import re

from .text import finding_line

# what a message cites of one release: `verl 0.9.1`, `agent_loop.py:1247`, `actor.py:207-209,215`
_CITED = re.compile(r"\bverl \d+(?:\.\d+)*(?:\.?(?:post|rc|dev)\d+)?|(?<=\.py):\d+(?:[-,]\d+)*|(?<=\.yaml):\d+(?:[-,]\d+)*")


def cell(findings) -> str:
    """`ok`, `2 errors`, `1 warning` or `2 errors, 1 warning` for one script on one release."""
    errors = sum(1 for f in findings if f.severity == "error")
    warnings = sum(1 for f in findings if f.severity == "warning")
    parts = [f"{n} {word}{'s' * (n != 1)}" for n, word in ((errors, "error"), (warnings, "warning")) if n]
    return ", ".join(parts) or "ok"


def table_text(versions: list[str], table: dict[str, dict[str, str]]) -> str:
    """`table` maps a script path to {version: cell}."""
    width = max([len("script")] + [len(p) for p in table])
    heads = [f"verl {v}" for v in versions]
    cells = {v: [row.get(v, "-") for row in table.values()] for v in versions}
    widths = [max([len(h)] + [len(c) for c in cells[v]]) for h, v in zip(heads, versions, strict=True)]

    def row_text(first, items):
        return "  ".join([first.ljust(width)] + [c.ljust(w) for c, w in zip(items, widths, strict=True)])

    out = [row_text("script", heads)]
    for path, row in table.items():
        out.append(row_text(path, [row.get(v, "-") for v in versions]))
    return "\n".join(line.rstrip() for line in out) + "\n"


def _key(f):
    """One mistake whatever release says it: its place, rule, key and message with the release's
    own citations (its version, the file:line of its code) left out, and the profiles it holds in."""
    meaning = _CITED.sub("", f.message)
    return (f.path, f.line, f.column, f.rule, f.severity, f.key, meaning, tuple(p.describe() for p in f.profiles))


def split_findings(versions, by_version: dict) -> tuple[list, list]:
    """(findings that differ between releases, as (finding, [versions]); findings of every release,
    each once, as the first release says it)."""
    seen: dict = {}
    for v in versions:
        for f in by_version[v]:
            vs = seen.setdefault(_key(f), (f, []))[1]
            if v not in vs:
                vs.append(v)
    differ = [(f, vs) for f, vs in seen.values() if len(vs) != len(versions)]
    common = [f for f, vs in seen.values() if len(vs) == len(versions)]
    differ.sort(key=lambda item: item[0].sort_key())
    common.sort(key=lambda f: f.sort_key())
    return differ, common


def render(versions, table, by_version: dict, quiet: bool = False, color: bool = False, profiles=None) -> str:
    """The table, then the findings that differ between releases (each tagged with the releases
    it holds on), then those of every release. --quiet: the finding lines alone. `profiles`: each
    script's profiles (as the one-release report labels a finding of all of them)."""
    differ, common = split_findings(versions, by_version)
    every = profiles or {}
    keep = (lambda f: f.severity != "info") if quiet else (lambda f: True)
    differ = [(f, vs) for f, vs in differ if keep(f)]
    common = [f for f in common if keep(f)]
    lines = [] if quiet else table_text(versions, table).splitlines()
    if differ:
        if not quiet:
            lines += ["", "Findings that differ between releases:"]
        lines += [f"{finding_line(f, color, every.get(f.path))} (only verl {', '.join(vs)})" for f, vs in differ]
    if common:
        if not quiet:
            lines += ["", "Findings on every release:"]
        lines += [finding_line(f, color, every.get(f.path)) for f in common]
    return "\n".join(lines) + ("\n" if lines else "")


def document(fmt: str, versions, reports, table, by_version: dict, quiet: bool, color: bool) -> str:
    """The matrix in the chosen format: one report per release (json), one SARIF run per release,
    the annotations with the releases they hold on (github), or the table and findings (text)."""
    if fmt == "json":
        import json

        from . import json_report

        docs = [json_report.document(*rep) for rep in reports]
        out = {"version": 1, "matrix": [{"verl": v, **d} for v, d in zip(versions, docs, strict=True)]}
        return json.dumps(out, indent=2, ensure_ascii=False) + "\n"
    if fmt == "sarif":
        from . import sarif

        return sarif.render_runs(reports)
    if fmt == "github":
        from dataclasses import replace

        from . import github

        differ, common = split_findings(versions, by_version)
        tagged = [replace(f, message=f"{f.message} (only verl {', '.join(vs)})") for f, vs in differ]
        return github.render([], sorted(tagged + common, key=lambda f: f.sort_key()))
    profiles = {r.path: [p.profile for p in r.profiles] for results, _, _ in reports for r in results}
    return render(versions, table, by_version, quiet, color, profiles)
