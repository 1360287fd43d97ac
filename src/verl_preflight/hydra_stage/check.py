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

import json
import os
import re
from dataclasses import dataclass, replace

from .grammar import grammar_text, in_script_words
from .problems import GroupCause, HydraKind, LaunchProblem, Problem, RootCause, no_remedy


class Fallback(Exception):
    """The fast path cannot decide this exactly; use Hydra's own code."""


def is_group_selection(rec: dict, groups) -> bool:
    """Hydra's split (defaults_list.Overrides): a parsed override names a config group
    (or has a package) and its value is not a dict; everything else is a value override."""
    if not rec["ok"] or rec["sweep"]:
        return False
    return rec["package"] is not None or (rec["key"] in groups and rec["value_kind"] != "dict")


def check_overrides(cache, config_name: str, overrides: list[str], remedy=no_remedy) -> list[Problem]:
    """Every problem of the override list, in Hydra's order; `remedy(kind, text, key, tree, source,
    message)` gives (the mechanical fix where the composition supports one, the message with the
    advice): the rules own both."""
    records = cache.parse(overrides)
    problems = []
    for i, rec in enumerate(records):
        if not rec["ok"]:
            message = f"Hydra cannot parse '{overrides[i]}': {rec['error']}"
            problems.append(Problem(i, HydraKind.SYNTAX, None, message))
    if problems:
        return problems
    groups = set(cache.groups or ())
    group_idx = [i for i, r in enumerate(records) if is_group_selection(r, groups)]
    for i, rec in enumerate(records):
        if rec["sweep"] and rec.get("sweep_error"):
            problems.append(
                Problem(
                    i, HydraKind.SWEEP, rec["key"], f"{rec['sweep_error']} (quote the value or use [a,b] for a list)"
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
        return [Problem(culprit, HydraKind.CONFIG_GROUP, key, snap["error"])]
    value_idx = [i for i, r in enumerate(records) if i not in set(group_idx) and not r["sweep"]]
    found = _value_problems(cache, config_name, group_lines, snap, overrides, records, value_idx)
    tree = snap["tree"]
    out = []
    keys = [records[i]["key"] for i in value_idx if records[i]["key"] and records[i].get("kind") == "change"]
    folded = _set_before(_folded(cache, config_name, group_lines, found, tree, overrides, keys), records)
    for p in _in_another_root(cache, config_name, group_lines, folded, keys):
        if p.index is not None and p.key:
            fix, message = remedy(p, overrides[p.index], tree, cache.source)
            p = replace(p, fix=fix, message=message)
        out.append(p)
    return out


def _folded(
    cache, config_name: str, group_lines: tuple, found: list[Problem], tree: dict, overrides, keys: list
) -> list[Problem]:
    """Missing keys that one config group's other option has (the Megatron keys of a launch that
    composes model_engine=dp): one problem, at the first of them, that names the cause and folds
    the others in (`related`). Where the launch set that option as a key of a section instead of
    the group (`actor_rollout_ref.actor.model_engine=megatron`), the problem is at that key, the
    cause of the others, and says which of the launch's `keys` that option lacks."""
    missing = [p for p in found if p.kind is HydraKind.MISSING_KEY and p.key]
    if not missing:
        return found
    by_cause: dict = {}
    misplaced: dict = {}
    for p in missing:
        cause = _misplaced_choice(cache, config_name, group_lines, p.key, overrides[p.index])
        if cause is not None:
            misplaced.setdefault(cause, p)
            continue
        cause = _group_cause(cache, config_name, group_lines, p.key, tree)
        if cause is not None:
            by_cause.setdefault(cause, []).append(p)
    for cause, first in misplaced.items():
        group = [first, *by_cause.pop(replace(cause, misplaced=""), [])]
        lines = tuple(g for g in group_lines if g.split("=", 1)[0].lstrip("+") != cause.group)
        snap = cache.snapshot(config_name, lines + (f"{cause.group}={cause.option}",))
        lost = tuple(
            k for k in keys
            if k not in {q.key for q in group} and "tree" in snap and _missing_depth(snap["tree"], k) < len(k.split("."))
        )
        found = _fold(found, group, replace(cause, keys=tuple(q.key for q in group), lost=lost))
    for cause, group in by_cause.items():
        found = _fold(found, group, replace(cause, keys=tuple(q.key for q in group)))
    return found


def _set_before(found: list[Problem], records) -> list[Problem]:
    """A `+key=v` on an item that an earlier override of the launch set (not verl's config):
    those overrides are related, for the mistake may be theirs (an ungated `+key` before the
    gated one)."""
    out = []
    for p in found:
        if p.kind is HydraKind.APPEND_EXISTING and p.index is not None and p.key and not p.related:
            earlier = tuple(
                j for j in range(p.index) if records[j]["key"] == p.key and records[j].get("kind") != "delete"
            )
            p = replace(p, related=earlier) if earlier else p
        out.append(p)
    return out


def _misplaced_choice(cache, config_name: str, group_lines: tuple, key: str, text: str) -> GroupCause | None:
    """The config group choice a missing `section.group=option` means (its last part a selector
    group of the root config, its value one of that group's options other than the composed one),
    or None."""
    name = key.rsplit(".", 1)[-1]
    if "." not in key or "=" not in text:
        return None
    value = text.split("=", 1)[1].strip().strip("'\"")
    for group, default, options in _selectors(cache, config_name):
        if group != name or value not in options:
            continue
        chosen_line = next((g for g in group_lines if g.split("=", 1)[0].lstrip("+") == group), None)
        chosen = chosen_line.split("=", 1)[1] if chosen_line is not None else default
        if value != chosen:
            return GroupCause(group, chosen, value, chosen_line is not None, misplaced=key)
    return None


def _fold(found: list[Problem], group: list[Problem], cause) -> list[Problem]:
    """The problems with those of `group` (missing keys of one cause) made one: at the first of
    them, naming the cause, the others its related overrides."""
    first, rest = group[0], {q.index for q in group[1:]}
    return [
        replace(p, cause=cause, related=tuple(q.index for q in group[1:])) if p is first else p
        for p in found
        if p.index not in rest
    ]


_MAX_ROOTS = 12  # other root configs of the folder composed at most, to explain missing keys


def _in_another_root(cache, config_name: str, group_lines: tuple, found: list[Problem], keys: list) -> list:
    """Two or more keys missing for no group's sake, all of which one other root config of the
    launch's config folder has (a project's rl_factory_ppo_trainer.yaml beside verl's ppo_trainer,
    and no --config-name): one problem, at the first of them, naming that root config, the others
    folded in (`related`); only a root that has every other key the launch sets (`keys`) too, so
    that naming it makes none fail (a Megatron launch whose two FSDP keys ppo_trainer has is not
    told to compose ppo_trainer). A root is tried with its own defaults first (a composition every
    launch shares), and with the launch's group selections only when it has the keys there."""
    missing = [p for p in found if p.kind is HydraKind.MISSING_KEY and p.key and p.cause is None]
    if len(missing) < 2:
        return found
    def has_all(snap) -> bool:
        if "tree" not in snap:
            return False
        has = lambda key, tree=snap["tree"]: _missing_depth(tree, key) == len(key.split("."))  # noqa: E731
        return all(has(p.key) for p in missing) and all(has(key) for key in keys)  # (nothing else would fail)

    wanted = [p.key for p in missing] + list(keys)
    for candidate in _other_roots(cache, config_name):
        # first as composed with its defaults (once per tree, whatever the launch selects): a root
        # that lacks the keys there is passed over without composing the launch's selections, and
        # without composing it at all where no file its defaults reach names a part of one
        if not cache.known(candidate, ()) and _lacks_a_name(cache, candidate, wanted):
            continue
        if not has_all(cache.snapshot(candidate, ())):
            continue
        if not group_lines or has_all(cache.snapshot(candidate, group_lines)):
            other = candidate
            break
    else:
        return found
    return _fold(found, missing, RootCause(config_name, other, tuple(p.key for p in missing)))


def _lacks_a_name(cache, root: str, keys: list) -> bool:
    """Whether some part of some key's path is named nowhere in what `root`'s composition with its
    own defaults can hold: the mapping keys of every file its defaults list reaches, and the
    packages they are placed at (_names_reached). False when that cannot be told."""
    names = _names_reached(cache, root)
    return names is not None and any(
        part not in names for key in keys if not key.startswith("hydra.") for part in key.split(".")
    )


def _names_reached(cache, root: str) -> frozenset | None:
    """The names `root`'s composition with its own defaults can hold at any depth: every mapping
    key of each config file its defaults list reaches (an option chosen by an interpolation,
    an override and the option it overrides: all of them), and the parts of each group and
    package they are placed at. More names than Hydra composes, never fewer; None where Hydra's
    own reading cannot be followed (a file missing, unreadable or not YAML, a package or option
    only known when composed). Once a tree and root config (kept on `cache`)."""
    memo = cache.__dict__.setdefault("_names_reached", {})
    if root not in memo:
        memo[root] = _read_names(cache, root)
    return memo[root]


def _read_names(cache, root: str) -> frozenset | None:
    names: set = set()
    todo, seen = [("", root)], set()
    while todo:
        group, option = todo.pop()
        if (group, option) in seen:
            continue
        seen.add((group, option))
        names.update(p for p in group.split("/") if p)
        if option == ANY:
            options = _group_options(cache, group)
            if not options:
                return None
            todo.extend((group, o) for o in options)
            continue
        read = [_config_file(cache, os.path.join(d, group, option + ".yaml")) for d in cache.tree.dirs]
        read = [r for r in read if r is not None]
        if not read or any(r is UNREADABLE for r in read):
            return None
        for text, doc in read:
            for line in text.splitlines():
                if line.startswith("# @package"):
                    names.update(p for p in line[len("# @package") :].strip().split(".") if p)
            if doc is None:
                continue
            if not isinstance(doc, dict):
                return None
            _mapping_keys(doc, names)
            for entry in doc.get("defaults") or []:
                step = _defaults_entry(group, entry)
                if step is None:
                    return None
                names.update(step[0])
                todo.extend(step[1])
    return frozenset(names)


UNREADABLE = ("", None)  # (_config_file: a file there that is not UTF-8 YAML)


def _config_file(cache, path: str):
    """(text, parsed YAML) of a config file of the tree, read once a tree (kept on `cache`); None
    where no file is there, UNREADABLE where it cannot be read or parsed (Hydra says so when it
    composes). The launch's root config is read once for its selectors and its names."""
    memo = cache.__dict__.setdefault("_config_files", {})
    if path not in memo:
        from ..core.bounded_read import read_bounded
        from ..core.yaml_read import load

        found = None
        if os.path.isfile(path):
            found, data = UNREADABLE, read_bounded(path)
            if data is not None:
                try:
                    text = data.decode("utf-8")
                    found = (text, load(text))
                except Exception:  # (not UTF-8, not YAML)
                    pass
        memo[path] = found
    return memo[path]


def _group_options(cache, group: str) -> list[str]:
    """The options of a config group: its *.yaml in each folder of the tree, sorted."""
    return sorted(
        f[: -len(".yaml")]
        for top in cache.tree.dirs
        if os.path.isdir(os.path.join(top, group))
        for f in os.listdir(os.path.join(top, group))
        if f.endswith(".yaml")
    )


def _mapping_keys(node, names: set) -> None:
    """Every mapping key below `node` into `names`; a node YAML's aliases share is walked once."""
    stack, walked = [node], set()
    while stack:
        node = stack.pop()
        if id(node) in walked:
            continue
        walked.add(id(node))
        if isinstance(node, dict):
            names.update(k for k in node if isinstance(k, str))
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _defaults_entry(group: str, entry) -> tuple[list, list] | None:
    """(package names, [(group, option)] of the configs it reaches) of one defaults entry of a
    config in `group`; None where it cannot be followed without composing."""
    if isinstance(entry, str):
        if entry == "_self_":
            return [], []
        if "$" in entry or "@" in entry:
            return None
        folder, _, name = entry.strip("/").rpartition("/")
        base = "" if entry.startswith("/") else group
        return [], [("/".join(p for p in (base, folder) if p), name)]
    if not isinstance(entry, dict) or len(entry) != 1:
        return None
    ((key, value),) = entry.items()
    if not isinstance(key, str) or "$" in key:
        return None
    for word in ("override ", "optional "):
        key = key[len(word) :] if key.startswith(word) else key
    key, _, package = key.strip().partition("@")
    target = "/".join(p for p in (("" if key.startswith("/") else group), key.strip("/")) if p)
    if target == "hydra" or target.startswith("hydra/"):  # (Hydra's own configs: its `hydra` node)
        return [], []
    packages = [p for p in package.split(".") if p and p not in ("_global_", "_group_", "_here_", "_name_")]
    if value is None:
        return packages, []
    values = value if isinstance(value, list) else [value]
    if not all(isinstance(v, str) for v in values):
        return None
    # an option an interpolation or the command line chooses: any of the group's (ANY)
    return packages, [(target, ANY if "$" in v or v == "???" else v) for v in values]


ANY = "*"  # (no config file is named so: every option of the group)


def _other_roots(cache, config_name: str) -> list[str]:
    """The other root configs of the launch's primary config folder (its top-level *.yaml but
    verl's generated references), by name."""
    try:
        names = sorted(os.listdir(cache.tree.primary))
    except OSError:
        return []
    roots = [n[: -len(".yaml")] for n in names if n.endswith(".yaml") and not n.startswith("_")]
    return [r for r in roots if r != config_name][:_MAX_ROOTS]


def _group_cause(cache, config_name: str, group_lines: tuple, key: str, tree: dict) -> GroupCause | None:
    """The selector group (a `- group: option` of the root config's defaults, as model_engine)
    whose other option has the section `key` is in (its path exists deeper there than in `tree`,
    the launch's composition), or None."""
    depth = _missing_depth(tree, key)
    for group, default, options in _selectors(cache, config_name):
        chosen_line = next((g for g in group_lines if g.split("=", 1)[0].lstrip("+") == group), None)
        chosen = chosen_line.split("=", 1)[1] if chosen_line is not None else default
        for option in options:
            if option == chosen:
                continue
            lines = tuple(g for g in group_lines if g is not chosen_line) + (f"{group}={option}",)
            snap = cache.snapshot(config_name, lines)
            if "tree" in snap and _missing_depth(snap["tree"], key) > depth:
                return GroupCause(group, chosen, option, chosen_line is not None)
    return None


def _missing_depth(tree: dict, key: str) -> int:
    """How many parts of `key`'s path `tree` has (all of them: the key is there)."""
    node = tree
    parts = key.split(".")
    for i, part in enumerate(parts):
        if not isinstance(node, dict) or part not in node:
            return i
        node = node[part]
    return len(parts)


def _selectors(cache, config_name: str) -> list[tuple[str, str, list[str]]]:
    """[(group, default option, options)] of the root config's `- group: option` defaults whose
    group has more than one option in the config folders (verl's model_engine): read once per
    tree and root config (kept on `cache`, which lives as long as the tree's digest holds)."""
    memo = cache.__dict__.setdefault("_selectors", {})
    if config_name not in memo:
        memo[config_name] = _read_selectors(cache, config_name)
    return memo[config_name]


def _read_selectors(cache, config_name: str) -> list[tuple[str, str, list[str]]]:
    out = []
    for d in cache.tree.dirs:
        read = _config_file(cache, os.path.join(d, f"{config_name}.yaml"))
        if read is None:
            continue
        doc = read[1] or {}
        for entry in doc.get("defaults", []) if isinstance(doc, dict) else []:
            if not isinstance(entry, dict) or len(entry) != 1:
                continue
            (group, default), = entry.items()
            if not isinstance(group, str) or not isinstance(default, str) or "@" in group or "$" in default:
                continue
            options = _group_options(cache, group)
            if len(options) > 1:
                out.append((group, default, options))
        break
    return out


def typo_of(tree: dict, key: str) -> str | None:
    """The one existing key that `key` misspells: at the first part of its path the tree lacks,
    exactly one name is one edit away (a character added, dropped, changed, or two swapped; two
    edits for names of 10 characters or more). None when no name or several are."""
    parts, node, depth = _first_missing(tree, key)
    name = parts[depth]
    limit = 2 if len(name) >= 10 else 1
    near = [k for k in node if isinstance(k, str) and k != name and edit_distance(name, k) <= limit]
    if len(near) != 1:
        return None
    return ".".join(parts[:depth] + near + parts[depth + 1 :])


def _first_missing(tree: dict, key: str) -> tuple[list[str], dict, int]:
    """(the key's parts, the deepest dict on its path, the index of the part looked up in it):
    the path is followed while its parts name dicts (the last part is never followed)."""
    parts = key.split(".")
    node, depth = tree, 0
    while depth < len(parts) - 1 and isinstance(node.get(parts[depth]), dict):
        node = node[parts[depth]]
        depth += 1
    return parts, node, depth


def edit_distance(a: str, b: str) -> int:
    """Damerau-Levenshtein distance (optimal string alignment): insertions, deletions,
    substitutions and swaps of two neighbours, one edit each."""
    if abs(len(a) - len(b)) > 2:
        return 3
    prev2, prev = None, list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if prev2 is not None and i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[len(b)]


def lookup(tree: dict, key: str) -> tuple[bool, object]:
    """(whether `key` is in the tree, its node)."""
    node = tree
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def did_you_mean(tree: dict, key: str) -> str | None:
    """The nearest existing key: follow the path while it exists, then the closest name."""
    close = close_keys(tree, key, 1)
    return close[0] if close else None


def close_keys(tree: dict, key: str, n: int) -> list[str]:
    """Up to n existing keys like `key`, nearest first (difflib's ratio, at least 0.75): follow
    the path while it exists, then the closest names at the first part that does not."""
    import difflib  # (only for a key that is not there)

    parts, node, depth = _first_missing(tree, key)
    close = difflib.get_close_matches(parts[depth], [k for k in node if isinstance(k, str)], n=n, cutoff=0.75)
    return [".".join(parts[:depth] + [c] + parts[depth + 1 :]) for c in close]


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
        memo = [[p.index, p.kind.name, p.key, p.message] for p in found]
        cache.verdicts[memo_key] = memo
        cache.dirty = True
    return [Problem(value_idx[i], HydraKind[kind], key, message) for i, kind, key, message in memo]


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
                kind, text = message
                problems.append(Problem(i, kind, rec["key"], text))
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
                return HydraKind.DELETE_MISSING, f"Could not delete from config. '{key}' does not exist."
            if rec["has_value"] and value is not None and value != current:
                return HydraKind.DELETE_MISSING, (
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
                return HydraKind.APPEND_EXISTING, (
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
        return HydraKind.MISSING_KEY, f"Could not override '{key}'. To append to your config use +{line}"


# ---- the exact path ------------------------------------------------------


def slow_apply(composed, positions, texts) -> list[Problem]:
    """Apply overrides one by one with Hydra's own code on a copy of the composition.

    `positions` pairs each text's position in `texts` with its index in the launch;
    the returned problems carry the position in `texts`."""
    from hydra._internal.config_loader_impl import ConfigLoaderImpl
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from .grammar import _first_line
    from .tree import copy_composed, release_copy

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
                problems.append(Problem(i, _kind_of(msg), override.key_or_group, msg))
    finally:
        release_copy(cfg)  # freed now rather than by a full garbage collection
    return problems


def _kind_of(message: str) -> HydraKind:
    """The kind of problem Hydra's message is (its ConfigCompositionException texts)."""
    if message.startswith("Could not override"):
        return HydraKind.MISSING_KEY
    if message.startswith("Could not append"):
        return HydraKind.APPEND_EXISTING
    if message.startswith("Could not delete"):
        return HydraKind.DELETE_MISSING
    return HydraKind.OVERRIDE_ERROR


# ---- one launch ------------------------------------------------------------


def config_name_of(spec, source) -> str | None:
    """The root config a launch composes: --config-name, else the entry point's own."""
    from .tree import entry_config_name, own_arguments

    if spec.config_name and spec.app is None and source is not None and own_arguments(source, spec.module):
        return None  # an argparse module: `--config-name` is its own option (or refused), no Hydra's
    if spec.config_name:
        name = spec.config_name
        return name[: -len(".yaml")] if name.endswith(".yaml") else name
    app = getattr(spec, "app", None)
    if app is not None:  # a Hydra app of the project's: its own @hydra.main
        return app.config_name if app.why is None else None
    if source is None:
        return None
    return entry_config_name(source, spec.module)[1]


def _close_config_names(tree, name: str) -> list[str]:
    """Root configs of the folders (their top-level *.yaml) nearest to a misspelt --config-name."""
    import os

    roots = set()
    for d in tree.dirs:
        try:
            roots |= {f[:-5] for f in os.listdir(d) if f.endswith(".yaml")}
        except OSError:
            continue
    import difflib  # (only for a root config that is not there)

    return difflib.get_close_matches(name, sorted(roots), n=2, cutoff=0.6)


def check_launch(spec, config_name: str | None, cache, search, remedy=no_remedy, source=None) -> list[LaunchProblem]:
    """The Hydra stage for one launch: entry point, root config, then every override.

    An override whose value is partly unknown is checked for grammar and for its
    key, never for its value (Hydra would type-check the stand-in). A config-group
    selection whose option is partly unknown is checked for its group name and for
    an option that could match; the other overrides are checked under every option
    it could be, and a problem is reported only when every option has it. A
    --config-path or --config-name known only at run time stops the checks (the
    root config is not known)."""
    stop = _entry_and_root(spec, config_name, cache, search, source or cache.source)
    if stop is not None:
        if stop and stop[0].kind in (HydraKind.UNKNOWN_ENTRY, HydraKind.CONFIG_PATH, HydraKind.UNKNOWN_ARGUMENT):
            return stop + _grammar_only(spec, cache)  # the root config is not here: the grammar still holds
        return stop
    texts, where, found = [], [], []
    for o in spec.overrides:
        text = grammar_text(o.field)
        if text is None:
            message = f"argument '{o.display}' is not known statically; it is not checked"
            found.append(LaunchProblem(HydraKind.UNKNOWN_ARGUMENT, o.loc, message))
            continue
        texts.append(text)
        where.append(o)
    open_groups, stop = _open_groups(cache, texts, where)
    if stop is not None:
        return [*found, stop]
    for p in _whatever_the_options(cache, config_name, texts, open_groups, remedy):
        o = where[p.index] if p.index is not None else None
        if o is not None and not o.known and p.kind is HydraKind.OVERRIDE_ERROR:
            continue  # a type check of the stand-in, not of the script's value
        loc = o.loc if o is not None else spec.loc
        message = in_script_words(o.field, p.message) if o is not None else p.message
        related = tuple((where[i].loc, where[i].key) for i in p.related)
        found.append(LaunchProblem(p.kind, loc, message, p.key, p.fix if o is not None else None, related=related))
    return found


def _missing_vendor(spec) -> str | None:
    """`python3 -m pkg.verl.trainer.main_ppo` where neither the script's project holds pkg/ nor
    this Python can import pkg (looked up, never imported): the message, else None. A warning:
    the launch may run from another folder or in another environment."""
    import importlib.util

    from .tree import project_holds

    if ".verl." not in spec.module or spec.module.startswith("verl."):
        return None
    top = spec.module.split(".")[0]
    path = spec.loc.path if spec.loc else "-"
    try:
        importable = importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        importable = False
    if importable or project_holds(path, top):
        return None
    return (
        f"No module named {top} here: neither the script's project (its folder and those above, up to the "
        "repository root) holds it, nor is it installed in this Python"
    )


def _grammar_only(spec, cache) -> list:
    """Hydra's grammar on the overrides of a launch whose root config is not here: Hydra parses
    every override before it composes (overrides_parser.py:96), so a syntax error fails the launch
    whatever the config."""
    items = [(o, grammar_text(o.field)) for o in spec.overrides if grammar_text(o.field) is not None]
    out = []
    for (o, text), rec in zip(items, cache.parse([t for _, t in items]), strict=True):
        if not rec["ok"]:
            message = in_script_words(o.field, f"Hydra cannot parse '{text}': {rec['error']}")
            out.append(LaunchProblem(HydraKind.SYNTAX, o.loc, message))
    return out


def _entry_and_root(spec, config_name: str | None, cache, search, source) -> list | None:
    """The finding that stops a launch's checks before its overrides: a module python3 -m
    cannot find, a module that is no Hydra entry point, a root config known only at run
    time, config folders that are not here (target_config.ConfigSearch), a --config-name the
    folders lack; None when the overrides are next."""
    from .tree import has_source, module_exists, own_arguments

    app = getattr(spec, "app", None)
    if app is not None and (app.why or config_name is None):  # the project's module, not read to its config
        why = app.why or "its @hydra.main names no config_name, and the launch gives no --config-name"
        message = f"{spec.module}: {why}; its arguments are not checked"
        return [LaunchProblem(HydraKind.UNKNOWN_ENTRY, spec.loc, message, at_most="info")]
    exists, close = module_exists(source, spec.module)  # the launch's verl (the cache's tree may be another's)
    missing = _missing_vendor(spec)
    if missing:
        where = spec.argv[spec.entry].loc if spec.argv else spec.loc
        return [LaunchProblem(HydraKind.UNKNOWN_MODULE, where, missing, at_most="warning")]
    if exists is False:
        where = spec.argv[spec.entry].loc if spec.argv and spec.argv[spec.entry].loc else spec.loc
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        message = f"No module named {spec.module}: python3 -m stops before verl starts{hint}"
        return [LaunchProblem(HydraKind.UNKNOWN_MODULE, where, message)]
    if config_name is None and own_arguments(source, spec.module):
        return []  # a program that reads its own options (model_merger, a fork's own CLI): nothing to say
    if config_name is None:
        if has_source(source, spec.module):
            message = f"{spec.module} is not a Hydra entry point of this verl"
            return [LaunchProblem(HydraKind.UNKNOWN_ENTRY, spec.loc, message)]
        message = f"{spec.module} has no source next to this config tree; its arguments are not checked"
        return [LaunchProblem(HydraKind.UNKNOWN_ENTRY, spec.loc, message, at_most="info")]
    if spec.config_name is None and spec.config_name_loc is not None:
        message = "--config-name is known only at run time; the root config and the overrides are not checked"
        return [LaunchProblem(HydraKind.UNKNOWN_ARGUMENT, spec.config_name_loc, message)]
    if not search.checkable:
        message = f"not checked past the root config: {search.missing}"
        if search.assumed:
            message += f" ({search.assumed})"
        return [LaunchProblem(HydraKind.CONFIG_PATH, spec.config_path_loc or spec.loc, message)]
    bare = config_name[: -len(".yaml")] if config_name.endswith(".yaml") else config_name  # Hydra accepts both
    if not re.fullmatch(r"[\w./-]+", bare) or cache.tree.find(bare + ".yaml") is None:
        where = " or ".join(cache.tree.dirs)
        message = f"--config-name={config_name}: there is no {bare}.yaml in {where}"
        close = _close_config_names(cache.tree, bare)
        if close:
            message += f" (did you mean {' or '.join(repr(c) for c in close)}?)"
        return [LaunchProblem(HydraKind.CONFIG_NAME, spec.config_name_loc or spec.loc, message)]
    return None


@dataclass
class _OpenGroup:
    """A config-group selection whose option is partly unknown (`engine=${B}`)."""

    position: int  # in the launch's override texts
    lines: list  # the override lines it could be, one per option that matches
    pattern: re.Pattern  # its text, each unknown piece a named group u<i>
    pieces: tuple  # the override's pieces: text and Unknowns

    def value_of(self, line: str) -> dict:
        """{Unknown: the text it is in `line`} for an environment variable read once in the word."""
        unknown = [(i, p) for i, p in enumerate(self.pieces) if not isinstance(p, str)]
        if len(unknown) != 1:  # two unknown pieces in one word split the option ambiguously
            return {}
        i, piece = unknown[0]
        if not piece.label.startswith("environment variable"):
            return {}
        return {piece: self.pattern.fullmatch(line).group(f"u{i}")}


def _open_groups(cache, texts: list[str], where: list) -> tuple[list[_OpenGroup], object]:
    """The selections whose option is partly unknown, each with the options it could be;
    or the problem that stops the checks (a group of Hydra's own, or no option can match)."""
    out = []
    groups = set(cache.groups or ())
    for n, (o, rec) in enumerate(zip(where, cache.parse(texts), strict=True)):
        if o.known or not is_group_selection(rec, groups):
            continue
        key_text = texts[n].split("=", 1)[0]
        pieces = o.field.pieces
        pattern = re.compile(
            "".join(re.escape(p) if isinstance(p, str) else f"(?P<u{i}>.*)" for i, p in enumerate(pieces)), re.S
        )
        lines = [f"{key_text}={opt}" for opt in _options_of(cache, rec["key"])]
        lines = [line for line in lines if pattern.fullmatch(line)]
        if cache.tree.find(*rec["key"].split("/")) is None:
            message = f"'{o.display}' selects an option of '{rec['key']}' known only at run time; not checked"
            return out, LaunchProblem(HydraKind.UNKNOWN_ARGUMENT, o.loc, message)  # a group of Hydra's own
        if not lines:
            message = f"no option of config group '{rec['key']}' in {' or '.join(cache.tree.dirs)} can be '{o.display}'"
            return out, LaunchProblem(HydraKind.CONFIG_GROUP, o.loc, message, rec["key"])
        out.append(_OpenGroup(n, lines, pattern, pieces))
    return out, None


def _options_of(cache, group: str) -> list[str]:
    """The options of a config group: the .yaml files under its folder (sub-folders as a/b)."""
    import os

    out = []
    for base in cache.tree.dirs:
        top = os.path.join(base, *group.split("/"))
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            rel = os.path.relpath(dirpath, top)
            for name in sorted(filenames):
                if name.endswith(".yaml"):
                    stem = name[: -len(".yaml")]
                    option = stem if rel == "." else f"{rel.replace(os.sep, '/')}/{stem}"
                    if option not in out:
                        out.append(option)
    return out


def _consistent(open_groups: list[_OpenGroup], choice) -> bool:
    """One environment variable read twice in a launch (`engine=${B} optim=${B}`) has one
    value: a combination of options that needs two values for it is not a launch."""
    seen: dict = {}
    for group, line in zip(open_groups, choice, strict=True):
        for piece, value in group.value_of(line).items():
            if seen.setdefault(piece, value) != value:
                return False
    return True


MAX_OPTION_RUNS = 32


def _whatever_the_options(cache, config_name: str, texts: list[str], open_groups: list[_OpenGroup], remedy) -> list[Problem]:
    """check_overrides with each open selection replaced by each option it could be (up to
    32 runs): the problems every run has (same override, rule and key), in the first run's order.
    A problem keeps its fix only when every run proposes the same one (`+` can be right for one
    option's dataclass and break another's)."""
    import itertools

    if not open_groups:
        return check_overrides(cache, config_name, texts, remedy)
    choices = [c for c in itertools.product(*(g.lines for g in open_groups)) if _consistent(open_groups, c)]
    common, first = None, None
    fixes: dict[tuple, set] = {}  # (index, kind, key) -> the fixes the runs propose
    for choice in choices[:MAX_OPTION_RUNS]:
        trial = list(texts)
        for group, line in zip(open_groups, choice, strict=True):
            trial[group.position] = line
        found = check_overrides(cache, config_name, trial, remedy)
        ids = {(p.index, p.kind, p.key) for p in found}
        for p in found:
            fixes.setdefault((p.index, p.kind, p.key), set()).add(p.fix)
        first, common = (found, ids) if first is None else (first, common & ids)
    if len(choices) > MAX_OPTION_RUNS:  # untried options could clear a problem
        common = {c for c in common if c[1] in (HydraKind.SYNTAX, HydraKind.SWEEP)}
    out = []
    for p in first:
        k = (p.index, p.kind, p.key)
        if k in common:
            out.append(p if len(fixes[k]) == 1 else replace(p, fix=None))
    return out
