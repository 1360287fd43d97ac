"""`--format json`: the one object design.md fixes."""

from __future__ import annotations

import json


def finding_obj(f) -> dict:
    return {
        "path": f.path,
        "line": f.line,
        "column": f.column,
        "rule": f.rule,
        "severity": f.severity,
        "message": f.message,
        "key": f.key,
        "profiles": [dict(p.env) for p in f.profiles],
        "assumptions": [[str(a) for a in p.assumptions] for p in f.profiles],
    }


def render(results, findings, source) -> str:
    doc = {
        "version": 1,
        "config_source": {
            "path": source.path if source else None,
            "verl_version": source.verl_version if source else None,
        },
        "scripts": [
            {
                "path": r.path,
                "profiles": [
                    {
                        "env": dict(p.profile.env),
                        "assumptions": [a.as_json() for a in p.profile.assumptions],
                        "status": p.status,
                        "launches": [
                            {
                                "line": la.line,
                                "module": la.module,
                                "config_name": la.config_name,
                                "overrides": la.overrides,
                            }
                            for la in p.launches
                        ],
                    }
                    for p in r.profiles
                ],
            }
            for r in results
        ],
        "findings": [finding_obj(f) for f in findings],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
