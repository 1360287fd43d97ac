"""`[tool.validate-scripts]` in the pyproject.toml of the current directory (or above)."""

from __future__ import annotations

import os
import tomllib

KEYS = ("paths", "exclude", "verl", "verl-config", "schema", "severity", "stack", "device")
FILE = "__file__"  # where the settings came from (not a key a user writes)


def project_settings(start: str | None = None) -> dict:
    cur = os.path.abspath(start or os.getcwd())
    for _ in range(32):
        path = os.path.join(cur, "pyproject.toml")
        if os.path.isfile(path):
            try:
                with open(path, "rb") as fh:
                    data = tomllib.load(fh)
            except (OSError, tomllib.TOMLDecodeError):
                return {}
            table = data.get("tool", {}).get("validate-scripts", {})
            if not isinstance(table, dict):
                return {}
            out = dict(table)
            out[FILE] = path
            for key in ("schema", "verl-config"):
                if isinstance(out.get(key), str) and not os.path.isabs(out[key]):
                    out[key] = os.path.join(cur, out[key])
            if isinstance(out.get("paths"), list):
                out["paths"] = [p if os.path.isabs(p) else os.path.relpath(os.path.join(cur, p)) for p in out["paths"]]
            return out
        parent = os.path.dirname(cur)
        if parent == cur:
            return {}
        cur = parent
    return {}


def unknown_keys(settings: dict) -> list[str]:
    """Keys of the table this version does not know (a typo, or a newer version's key)."""
    return [k for k in settings if k != FILE and k not in KEYS]
