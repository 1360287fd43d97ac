"""`[tool.validate-scripts]` in the nearest pyproject.toml that has the table, at or above the
scripts checked (the folder the paths given share; the current directory when none is given),
as ruff finds its settings from the files it checks: the same script gives the same report
from any working directory.

The table read from a file's bytes is kept in the cache folder by their digest (a warm run
would spend longer importing and running the TOML parser than checking); a table that is not
plain JSON (a TOML date) is read each time."""

from __future__ import annotations

import hashlib
import os

from ..store import queries

KEYS = ("paths", "exclude", "verl", "verl-config", "python", "schema", "severity", "stack", "device")
FILE = "__file__"  # where the settings came from (not a key a user writes)


def settings_start(paths) -> str:
    """Where the search for settings starts: the folder the paths given share (a file's folder),
    else (none given, or standard input alone) the current directory."""
    given = [os.path.abspath(p) for p in paths or () if p != "-"]
    if not given:
        return os.getcwd()
    common = os.path.commonpath(given)
    return common if os.path.isdir(common) else os.path.dirname(common)


def project_settings(start: str | None = None, use_disk: bool = True) -> dict:
    cur = os.path.abspath(start or os.getcwd())
    for _ in range(32):
        path = os.path.join(cur, "pyproject.toml")
        if os.path.isfile(path):
            from ..core.bounded_read import read_bounded

            data = read_bounded(path)
            if data is None:
                return {}
            table = _table(data, use_disk)
            if table is False:  # a pyproject.toml without the table: the one above may have it
                parent = os.path.dirname(cur)
                if parent == cur:
                    return {}
                cur = parent
                continue
            if not isinstance(table, dict):
                return {}
            out = dict(table)
            out[FILE] = path
            for key in ("schema", "verl-config", "python"):
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


def _table(data: bytes, use_disk: bool):
    """The `[tool.validate-scripts]` table of a pyproject.toml's bytes (None: not TOML; False: no
    such table)."""
    digest = hashlib.sha256(data).hexdigest()
    kept = queries.get("settings", (digest,)) if use_disk else None
    if kept is not None:
        return kept[0]
    table = _parsed(data)
    if use_disk:
        import json  # (a warm start reads the kept table and imports no json)

        try:
            plain = json.loads(json.dumps(table)) == table
        except (TypeError, ValueError):
            plain = False
        if plain:
            queries.put("settings", (digest,), table)
    return table


def _parsed(data: bytes):
    import tomllib

    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    tool = doc.get("tool", {})
    if not isinstance(tool, dict):
        return None
    return tool.get("validate-scripts", False)


def unknown_keys(settings: dict) -> list[str]:
    """Keys of the table this version does not know (a typo, or a newer version's key)."""
    return [k for k in settings if k != FILE and k not in KEYS]
