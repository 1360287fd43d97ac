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
        "related": [{"path": p, "line": ln, "column": c, "key": k} for p, ln, c, k in f.related],
        # what other stacks, profiles or rules say of the same mistake at this place
        "also": [
            {"rule": o.rule, "severity": o.severity, "message": o.message, "profiles": [dict(p.env) for p in o.profiles]}
            for o in f.also
        ],
    }


def pieces(field):
    """An argument that is partly unknown, as a list: known text as strings, each unknown
    piece as {"unknown": "<what the script wrote>"} (or {"unknown": null, "label": ...}
    when the script wrote nothing for it, e.g. input read at run time); None when the
    argument is fully known. `${HOME}` in an override's string may thus be the script's
    run-time variable, never a Hydra interpolation, only where this says so."""
    if field is None or field.known:
        return None
    out = []
    for piece in field.pieces:
        if isinstance(piece, str):
            out.append(piece)
        elif piece.source is not None:
            out.append({"unknown": piece.source})
        else:
            out.append({"unknown": None, "label": piece.label})
    return out


def launch_obj(la) -> dict:
    spec = la.spec
    return {
        "line": la.line,
        "module": la.module,
        "config_name": la.config_name,
        "overrides": la.overrides,
        "unknown_parts": [pieces(o.field) for o in spec.overrides] if spec is not None else [],
        "target": la.target.as_json() if la.target is not None else None,
        "unchecked": getattr(la, "unchecked", None),  # why its config was not composed (None: it was)
    }


def scripts_obj(results) -> list:
    return [
        {
            "path": r.path,
            "profiles": [
                {
                    "env": dict(p.profile.env),
                    "label": p.profile.describe(),
                    "assumptions": [a.as_json() for a in p.profile.assumptions],
                    "status": p.status,
                    "launches": [launch_obj(la) for la in p.launches],
                }
                for p in r.profiles
            ],
            "coverage": r.coverage.as_json() if getattr(r, "coverage", None) is not None else None,
            "unchecked": r.unchecked.as_json() if getattr(r, "unchecked", None) is not None else None,
            "no_launch": r.no_launch.as_json() if getattr(r, "no_launch", None) is not None else None,
            # variables it takes from its environment that the repository gives elsewhere (docs, wrapper, CI)
            "inputs": [{"name": n, "where": w} for n, w in getattr(r, "inputs", ())],
        }
        for r in results
    ]


def render(results, findings, source, cluster=None) -> str:
    doc = document(results, findings, source)
    if cluster is not None:  # (preflight: the cluster the launches were checked against)
        doc = {**doc, "cluster": cluster.as_json()}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def document(results, findings, source) -> dict:
    return {
        "version": 1,
        "config_source": {
            "path": source.path if source else None,
            "verl_version": source.verl_version if source else None,
            "entry_points": source.entry_points if source else None,
        },
        "scripts": scripts_obj(results),
        "findings": [finding_obj(f) for f in findings],
    }
