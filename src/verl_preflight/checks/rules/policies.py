"""Data policies from the schema: required-value, allowed-only-when, requires.

Each is one small check over a LaunchView; the schema entry supplies keys,
values, the condition (`when`: engine, profile values, key patterns) and the
message, with `{key}` and `{value}` filled in.
"""

from __future__ import annotations

import re

from ...findings import Finding
from .view import UNKNOWN


def applies(policy, view) -> bool:
    when = policy.spec.get("when", {}) or {}
    if "engine" in when and view.engine != when["engine"]:
        return False
    for var, want in (when.get("profile") or {}).items():
        if view.profile(var) != str(want):
            return False
    for key, pattern in (when.get("key-matches") or {}).items():
        shown = view.shown(key)
        if shown is None or not re.search(pattern, shown):
            return False
    return True


def _message(policy, key: str, value) -> str:
    template = policy.spec.get("message") or "{key}={value} breaks policy " + policy.id
    return template.replace("{key}", key).replace("{value}", _show(value))


def _show(value) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    return "null" if value is None else str(value)


def _same(actual, wanted) -> bool:
    if isinstance(wanted, bool) or isinstance(actual, bool):
        return isinstance(actual, bool) and actual == wanted
    return actual == wanted or str(actual) == str(wanted)


def required_value(policy, view) -> list[Finding]:
    if not applies(policy, view):
        return []
    out = []
    for key, wanted in policy.spec["keys"].items():
        setting = view.setting(key)
        value = view.value(key)
        if value is UNKNOWN or value is None and setting is None:
            continue
        if setting is None and view.default(key) is not None and view.interpolated(key):
            continue  # follows another key, which is checked in its own right
        if not _same(value, wanted):
            out.append(Finding.at(view.where(key), policy.id, policy.severity, _message(policy, key, value), key))
    return out


def allowed_only_when(policy, view) -> list[Finding]:
    if applies(policy, view):
        return []
    out = []
    for key in policy.spec["keys"]:
        setting = view.setting(key)
        if setting is not None:
            out.append(Finding.at(setting.loc, policy.id, policy.severity, _message(policy, key, setting.value), key))
    return out


def requires(policy, view) -> list[Finding]:
    if not applies(policy, view):
        return []
    cond, need = policy.spec["if"], policy.spec["then"]
    value = view.value(cond["key"])
    if value is UNKNOWN or ("value" in cond and not _same(value, cond["value"])) or value is None:
        return []
    got = view.value(need["key"])
    if got is UNKNOWN:
        return []
    if "value" in need and _same(got, need["value"]):
        return []
    if "value" not in need and got is not None:
        return []
    return [
        Finding.at(view.where(cond["key"]), policy.id, policy.severity, _message(policy, need["key"], got), cond["key"])
    ]


KINDS = {"required-value": required_value, "allowed-only-when": allowed_only_when, "requires": requires}
