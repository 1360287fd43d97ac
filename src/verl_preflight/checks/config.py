"""Check one launch's override list the way `hydra.compose` would.

Hydra first parses every override (a syntax error stops it), then composes the
config with the config-group selections, then applies the value overrides in
order in struct mode (`ConfigLoaderImpl._apply_overrides_to_config`). We do the
same: group selections are composed once per run (and cached across runs);
value overrides are applied to a plain snapshot by `FastApply`, which mirrors
Hydra's and OmegaConf's rules for the common case and hands anything subtle
(interpolations on the path, dict/list merges, lists, the typed `hydra` node)
to `slow_apply`, which runs Hydra's own code on a copy of the composed config.
Every problem is reported, in Hydra's order; the first is the one Hydra raises.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    index: int | None  # which override (None: the launch as a whole)
    rule: str
    key: str | None
    message: str


class Fallback(Exception):
    """The fast path cannot decide this exactly; use Hydra's own code."""


def is_group_selection(rec: dict, groups) -> bool:
    """Hydra's split (defaults_list.Overrides): a parsed override names a config group
    (or has a package) and its value is not a dict; everything else is a value override."""
    if not rec["ok"] or rec["sweep"]:
        return False
    return rec["package"] is not None or (rec["key"] in groups and rec["value_kind"] != "dict")


def check_overrides(cache, config_name: str, overrides: list[str]) -> list[Problem]:
    records = cache.parse(overrides)
    problems = []
    for i, rec in enumerate(records):
        if not rec["ok"]:
            problems.append(Problem(i, "override-syntax", None, f"Hydra cannot parse '{overrides[i]}': {rec['error']}"))
    if problems:
        return problems
    groups = set(cache.groups or ())
    group_idx = [i for i, r in enumerate(records) if is_group_selection(r, groups)]
    for i, rec in enumerate(records):
        if rec["sweep"] and rec.get("sweep_error"):
            problems.append(
                Problem(
                    i, "override-sweep", rec["key"], f"{rec['sweep_error']} (quote the value or use [a,b] for a list)"
                )
            )
    if problems:
        return problems
    group_lines = tuple(overrides[i] for i in group_idx)
    snap = cache.snapshot(config_name, group_lines)
    if "error" in snap:
        culprit = _group_culprit(snap["error"], [(i, records[i]) for i in group_idx])
        if culprit is None:
            culprit = _first_failing_prefix(cache, config_name, overrides, group_idx)
        key = records[culprit]["key"] if culprit is not None else None
        return [Problem(culprit, "config-group", key, snap["error"])]
    value_idx = [i for i, r in enumerate(records) if i not in set(group_idx) and not r["sweep"]]
    found = _value_problems(cache, config_name, group_lines, snap, overrides, records, value_idx)
    return [_with_hint(p, snap["tree"]) for p in found]


def _with_hint(problem: Problem, tree: dict) -> Problem:
    """A missing key gets "did you mean" from the composition it was checked against."""
    if problem.rule != "override-missing-key" or not problem.key:
        return problem
    close = did_you_mean(tree, problem.key)
    if close is None:
        return problem
    return Problem(problem.index, problem.rule, problem.key, f"{problem.message} (did you mean '{close}'?)")


def did_you_mean(tree: dict, key: str) -> str | None:
    """The nearest existing key: follow the path while it exists, then the closest name."""
    parts = key.split(".")
    node, depth = tree, 0
    while depth < len(parts) - 1 and isinstance(node.get(parts[depth]), dict):
        node = node[parts[depth]]
        depth += 1
    close = difflib.get_close_matches(parts[depth], [k for k in node if isinstance(k, str)], n=1, cutoff=0.75)
    if not close:
        return None
    return ".".join(parts[:depth] + [close[0]] + parts[depth + 1 :])


def _value_problems(cache, config_name, group_lines, snap, overrides, records, value_idx) -> list[Problem]:
    try:
        return FastApply(snap["tree"]).run([(i, records[i]) for i in value_idx])
    except Fallback:
        pass
    memo_key = json.dumps([config_name, list(group_lines), [overrides[i] for i in value_idx]])
    memo = cache.verdicts.get(memo_key)
    if memo is None:
        found = slow_apply(
            cache.composed(config_name, group_lines), list(enumerate(value_idx)), [overrides[i] for i in value_idx]
        )
        memo = [[p.index, p.rule, p.key, p.message] for p in found]
        cache.verdicts[memo_key] = memo
        cache.dirty = True
    return [Problem(value_idx[i], rule, key, message) for i, rule, key, message in memo]


def _group_culprit(message: str, group_recs) -> int | None:
    """Which group selection Hydra's composition error is about."""
    for i, rec in group_recs:
        if rec["line"] in message:
            return i
    for i, rec in group_recs:
        if f"'{rec['key']}/" in message or f"'{rec['key']}'" in message or f" {rec['key']}." in message:
            return i
    return None


def _first_failing_prefix(cache, config_name, overrides, group_idx) -> int | None:
    for n in range(1, len(group_idx) + 1):
        if "error" in cache.snapshot(config_name, tuple(overrides[i] for i in group_idx[:n])):
            return group_idx[n - 1]
    return None


# ---- the fast path -------------------------------------------------------

MISSING = "???"


def _subtle(value) -> bool:
    return isinstance(value, str) and ("${" in value or value == MISSING)


class FastApply:
    """Hydra's override application on a plain snapshot (copy-on-write)."""

    def __init__(self, tree: dict):
        self.root = tree
        self.owned: set[int] = set()

    def run(self, items) -> list[Problem]:
        problems = []
        for i, rec in items:
            message = self.apply(rec)
            if message is not None:
                rule, text = message
                problems.append(Problem(i, rule, rec["key"], text))
        return problems

    def apply(self, rec):
        key = rec["key"]
        if key.startswith("hydra.") or key == "hydra" or "[" in key or not rec.get("plain", True):
            raise Fallback
        parts = key.split(".")
        if "" in parts:
            raise Fallback
        kind = rec["kind"]
        value = rec["value"]
        line = rec["line"]
        if kind == "delete":
            current = self.select(parts)
            if current is None:
                return "override-delete-missing", f"Could not delete from config. '{key}' does not exist."
            if rec["has_value"] and value is not None and value != current:
                return "override-delete-missing", (
                    f"Could not delete from config. The value of '{key}' is {current} and not {value}."
                )
            parent = self.owned_path(parts[:-1], create=False)
            del parent[parts[-1]]
            return None
        if rec["value_kind"] not in ("primitive", "list"):
            raise Fallback
        if kind == "add":
            # Hydra lets `+` merge a list (or dict) value over an existing item.
            if rec["value_kind"] == "primitive" and self.select(parts) is not None:
                return "override-append-existing", (
                    f"Could not append to config. An item is already at '{key}'. "
                    f"Either remove + prefix: '{line[1:]}' or use '+{line}' to add or override"
                )
            return self.update(parts, value, force_add=True, key=key, line=line)
        return self.update(parts, value, force_add=(kind == "force_add"), key=key, line=line)

    def select(self, parts):
        node = self.root
        for k in parts:
            if not isinstance(node, dict):
                if isinstance(node, list):
                    raise Fallback
                return None
            if k not in node:
                return None
            node = node[k]
            if _subtle(node):
                raise Fallback
        if isinstance(node, (dict, list)):
            return node
        return node

    def _own(self, node: dict) -> dict:
        if id(node) in self.owned:
            return node
        copied = dict(node)
        self.owned.add(id(copied))
        return copied

    def owned_path(self, parts, create: bool):
        """The dict at `parts`, copied on the way so it can be changed."""
        self.root = self._own(self.root)
        node = self.root
        for k in parts:
            child = node.get(k)
            if isinstance(child, list) or _subtle(child):
                raise Fallback
            if not isinstance(child, dict):
                if not create:
                    raise Fallback
                child = {}
            child = self._own(child)
            node[k] = child
            node = child
        return node

    def update(self, parts, value, force_add: bool, key: str, line: str):
        node = self.root
        for k in parts[:-1]:
            if not isinstance(node, dict):
                raise Fallback
            child = node.get(k)
            if isinstance(child, list) or _subtle(child):
                raise Fallback
            if not isinstance(child, dict):
                if k not in node and not force_add:
                    return self._missing(key, line)
                node = {}
                continue
            node = child
        if not isinstance(node, dict):
            raise Fallback
        last = parts[-1]
        if last not in node and not force_add:
            return self._missing(key, line)
        existing = node.get(last)
        if isinstance(existing, dict):
            raise Fallback  # OmegaConf merges into a dict node: leave it to Hydra
        parent = self.owned_path(parts[:-1], create=True)
        parent[last] = value
        return None

    @staticmethod
    def _missing(key: str, line: str):
        return "override-missing-key", (
            f"Could not override '{key}': no such key in verl's config. To add it use +{line}"
        )


# ---- the exact path ------------------------------------------------------


def slow_apply(composed, positions, texts) -> list[Problem]:
    """Apply overrides one by one with Hydra's own code on a copy of the composition.

    `positions` pairs each text's position in `texts` with its index in the launch;
    the returned problems carry the position in `texts`."""
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from ..verl_config import copy_composed, release_copy
    from .overrides import _first_line

    cfg = copy_composed(composed)  # copy.deepcopy's result, built faster
    parser = OverridesParser.create()
    problems = []
    try:
        for (i, _), text in zip(positions, texts, strict=False):
            override = parser.parse_override(text)
            try:
                ConfigLoaderImpl._apply_overrides_to_config([override], cfg)
            except Exception as err:  # ConfigCompositionException and OmegaConf's errors
                msg = _first_line(str(err))
                rule = _rule_of(msg)
                problems.append(Problem(i, rule, override.key_or_group, msg))
    finally:
        release_copy(cfg)  # freed now rather than by a full garbage collection
    return problems


def _rule_of(message: str) -> str:
    if message.startswith("Could not override"):
        return "override-missing-key"
    if message.startswith("Could not append"):
        return "override-append-existing"
    if message.startswith("Could not delete"):
        return "override-delete-missing"
    return "override-error"
