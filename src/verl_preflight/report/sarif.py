"""`--format sarif`: SARIF 2.1.0 for code scanning; rule texts come from the rule registry."""

from __future__ import annotations

import json
import os
from urllib.parse import quote

from .. import __version__
from ..rules import get
from .targets import grouped, verls

LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _rule_entry(rule_id: str) -> dict:
    rule = get(rule_id)
    if rule is None:  # a user's own schema policy
        return {
            "id": rule_id,
            "shortDescription": {"text": rule_id},
            "fullDescription": {"text": f"policy {rule_id} from the user's schema"},
        }
    why = f"{rule.why} Ground truth: {rule.ground_truth}." if rule.ground_truth else rule.why
    help_md = f"{why}\n\nFails:\n```bash\n{rule.bad}\n```\n\nPasses:\n```bash\n{rule.good}\n```"
    return {
        "id": rule.id,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": why},
        "help": {"text": f"{rule.summary}. {why}", "markdown": help_md},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
    }


def artifact_uri(path: str) -> str:
    """A path as a URI reference, percent-encoded: relative paths stay relative (code scanning
    resolves them against the checkout), absolute ones become file:// URIs."""
    if not path:
        return "."
    if path == "-":
        return "stdin"
    if os.path.isabs(path):
        return "file://" + quote(path.replace(os.sep, "/"))
    return quote(path.replace(os.sep, "/"))


def render(results, findings, source, cluster=None) -> str:
    doc = document(results, findings, source)
    if cluster is not None:  # (preflight: the cluster the launches were checked against, in the run's properties)
        for run in doc["runs"]:
            run.setdefault("properties", {})["cluster"] = cluster.as_json()
    return json.dumps(doc, indent=2) + "\n"


def render_runs(reports) -> str:
    """Several verl releases (a compatibility matrix): one SARIF run per release."""
    docs = [document(results, findings, source) for results, findings, source in reports]
    doc = docs[0]
    doc["runs"] = [run for d in docs for run in d["runs"]]
    return json.dumps(doc, indent=2) + "\n"


def _targets_of(results) -> dict:
    """{id(finding): [what its profiles' launches were checked against]}."""
    from .targets import profile_targets

    out: dict = {}
    for r in results:
        by_profile = profile_targets(r)
        for f in r.findings:
            shown = out.setdefault(id(f), [])
            for p in f.profiles:
                shown.extend(t for t in by_profile.get(p, []) if t not in shown)
    return out


def _related(f) -> dict:
    """SARIF relatedLocations: the other overrides a mistake of several settings involves."""
    if not f.related:
        return {}
    return {
        "relatedLocations": [
            {
                "id": i,
                "message": {"text": key or ""},
                "physicalLocation": {
                    "artifactLocation": {"uri": artifact_uri(path)},
                    "region": {"startLine": max(1, line), "startColumn": max(1, col)},
                },
            }
            for i, (path, line, col, key) in enumerate(f.related)
        ]
    }


def document(results, findings, source) -> dict:
    rule_ids = sorted({f.rule for f in findings})
    index = {rid: i for i, rid in enumerate(rule_ids)}
    targets = _targets_of(results)
    sarif_results = []
    for f in findings:
        sarif_results.append(
            {
                "ruleId": f.rule,
                "ruleIndex": index[f.rule],
                "level": LEVELS.get(f.severity, "warning"),
                "message": {"text": f.message},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": artifact_uri(f.path)},
                            "region": {"startLine": max(1, f.line), "startColumn": max(1, f.column)},
                        }
                    }
                ],
                **_related(f),
                "properties": {
                    "profiles": [dict(p.env) for p in f.profiles],
                    "assumptions": [[str(a) for a in p.assumptions] for p in f.profiles],
                    "key": f.key,
                    "targets": targets.get(id(f), []),
                    # what other stacks, profiles or rules say of the same mistake here
                    "also": [
                        {"rule": o.rule, "level": LEVELS.get(o.severity, "warning"), "message": o.message,
                         "profiles": [dict(p.env) for p in o.profiles]}
                        for o in f.also
                    ],
                },
            }
        )
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "validate-scripts",
                        "fullName": f"verl-preflight {__version__} (validate-scripts)",
                        "version": __version__,
                        # no informationUri: verl-preflight has no public home page to point at
                        # (the schema makes it optional; verl's URL would misattribute the tool)
                        "rules": [_rule_entry(r) for r in rule_ids],
                    }
                },
                "results": sarif_results,
                "properties": {
                    "verl_config": source.path if source else None,
                    "verl_version": source.verl_version if source else None,
                    # the verls the launches were checked against, with how many launches each
                    "checked_against": [
                        {"verl": text, "launches": checked, "not_checked": unchecked}
                        for text, checked, unchecked in verls(results)
                    ],
                    # what each script's launches were checked against (the text report's
                    # "checked against" note): verl and where it came from, device, stack
                    "targets": {
                        r.path: [{"target": text, "profiles": [p.describe() for p in profiles]}
                                 for text, profiles in grouped(r)]
                        for r in results if grouped(r)
                    },
                },
            }
        ],
    }
    return doc
