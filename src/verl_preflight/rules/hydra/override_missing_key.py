"""`key=value` on a key verl's config does not have."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from functools import lru_cache

from ...core.edits import Fix
from ...hydra_stage.check import close_keys, did_you_mean, lookup, typo_of
from ...hydra_stage.problems import GroupCause, HydraKind, RootCause
from .. import Rule


class OverrideMissingKey(Rule):
    id = "override-missing-key"
    severity = "error"
    concern = "key"  # one mistake with the other rules that say a key cannot be here
    stage = "hydra"
    problem = HydraKind.MISSING_KEY  # the Hydra stage problem it reports
    summary = "`key=value` on a key verl's config does not have"
    why = (
        "In struct mode Hydra only overrides existing keys; a new key needs `+` (or `++`). The advice is the "
        "fix: the existing key a misspelling means; `+` only where verl reads the new key (a field of the "
        "dataclass its section becomes, a key of a dict-typed field); for a key verl removed, the release "
        "that last had it (data/verl_key_history.json, from the releases' own config trees); for keys whose "
        "section only another option of a config group has (the Megatron keys of a launch on model_engine=dp), "
        "one finding that names that choice; a group's option set as a key of a section "
        "(`actor_rollout_ref.actor.model_engine=megatron`) is that choice misplaced, one finding with the keys it "
        "leaves missing."
    )
    ground_truth = (
        "hydra-core 1.3.8 hydra/_internal/config_loader_impl.py:390-394 ('Could not override ...'; struct mode)"
    )
    bad = "actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True"
    good = "+actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True"
    fixable = True
    fix_doc = (
        "adds the `+` where the key may be added: a field of the dataclass its section becomes that "
        "the YAML lacks, or a new key of a dict-typed field (override_transformer_config, engine_kwargs, ...) "
        "with no existing key close to it. A misspelt key with exactly one close existing key, where `+` "
        "would not do (the dataclass has no such field, or no dataclass owns the section), becomes that key. "
        "A config group's option set as a key of a section becomes the group's choice "
        "(`actor_rollout_ref.actor.model_engine=megatron` -> `model_engine=megatron`); unsafe (applied with "
        "--unsafe-fixes) where the launch sets a key that option lacks. "
        "Anything else (two close keys, a dict-typed field with a close key, a type the tool cannot read) "
        "is left to you."
    )

    @staticmethod
    def advise(problem, text: str, tree: dict, source) -> str:
        """The message with the advice that is the fix: where another option of a config group
        has the keys (model_engine=megatron), that choice, named once for all the keys it explains;
        else the existing key it most likely means (a rename); `+` only where verl reads the new
        key (a field of the dataclass its section becomes, or a key of a dict-typed field); where
        nothing would read it, no `+`."""
        from ..policy.config_field import addable

        key = problem.key
        cause = problem.cause
        if isinstance(cause, RootCause):
            others = len(cause.keys) - 1
            return (
                f"Could not override '{key}' and {others} more key{'s' if others > 1 else ''}: this launch composes "
                f"the root config {cause.chosen}, and all of them are in {cause.other}.yaml beside it: pass "
                f"--config-name={cause.other}"
            )
        if isinstance(cause, GroupCause) and cause.misplaced:
            chosen = f"{cause.group}={cause.chosen}" + ("" if cause.explicit else ", the default")
            others = len(cause.keys) - 1
            then = (f", and the {others} key{'s' if others > 1 else ''} that only {cause.group}={cause.option} has "
                    f"fail{'' if others > 1 else 's'} too") if others else ""
            lost = ", ".join(f"'{k}'" for k in cause.lost)
            also = (f"; then remove {lost}, which only {cause.group}={cause.chosen} has" if lost else "")
            return (f"Could not override '{key}': verl's config has no such key; {cause.group} is a config group "
                    f"of the root config (this launch composes {chosen}){then}: set {cause.group}={cause.option} "
                    f"in its place{also}")
        if cause is not None:
            chosen = f"{cause.group}={cause.chosen}" + ("" if cause.explicit else " (the default)")
            many = len(cause.keys) > 1
            what = f"'{key}' and {len(cause.keys) - 1} more key{'s' if len(cause.keys) > 2 else ''}" if many else f"'{key}'"
            where = "their sections exist" if many else "its section exists"
            return (f"Could not override {what}: {where} only with {cause.group}={cause.option}, and this "
                    f"launch composes {chosen}: set {cause.group}={cause.option}")
        head = f"Could not override '{key}': verl's config has no such key"
        status = addable(source, tree, key)
        version = getattr(source, "verl_version", None)
        past = release_history(key, version)
        if past is not None and typo_of(tree, key) is None:
            return f"Could not override '{key}': {past}; remove it"
        meant = did_you_mean(tree, key)
        if meant is not None:
            if status in ("field", "open"):
                return f"{head}; did you mean '{meant}'? (to add '{key}' as a new key instead: +{text})"
            return f"{head}; did you mean '{meant}'?"
        if status in ("field", "open") or status is None:
            return f"{head}. To add it use +{text}"
        if status == "missing":
            return (f"{head}, and the dataclass its section becomes has no such field either: `+` would make "
                    "verl refuse it at start; remove it or use a key of that section")
        return f"{head}, and nothing in verl reads it: `+` would add a setting verl ignores; remove it"

    @staticmethod
    def repair(problem, text: str, tree: dict, source):
        """The repair the composition says is right (fix_doc): a config group's option set as a
        key of a section (`actor_rollout_ref.actor.model_engine=megatron`) becomes the group's
        choice (`model_engine=megatron`); keys that another option or root config has, none; `+` where the key may be added (a
        field of the dataclass its section becomes, absent from the YAML; a new key of a dict-typed
        field with no existing key close to it); the one existing key a typo means, where `+` would
        not do. A close key that is no typo (grad_offload and param_offload) is a hint, never a fix."""
        from ..policy.config_field import addable

        key, cause = problem.key, problem.cause
        if isinstance(cause, GroupCause) and cause.misplaced:
            fix = Fix.rename_key(text, key, cause.group)
            if fix is not None and cause.lost:
                lost = ", ".join(f"'{k}'" for k in cause.lost)
                fix = replace(fix, unsafe=f"{cause.group}={cause.option} makes {lost} fail; remove it first")
            return fix
        if cause is not None:
            return None
        status = addable(source, tree, key)
        if status == "field" or status == "open" and not close_keys(tree, key, 1):
            return Fix.add_plus(text, key)
        meant = typo_of(tree, key)
        if meant is not None and status in ("missing", "plain"):
            found, node = lookup(tree, meant)
            if found and not isinstance(node, (dict, list)):
                return Fix.rename_key(text, key, meant)
        return None


HISTORY = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "data", "verl_key_history.json")


@lru_cache(maxsize=1)
def _history() -> dict:
    """The releases that have each config key (data/verl_key_history.json, written by
    tools/verl_key_history.py from the releases' wheels)."""
    try:
        with open(HISTORY, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}


def release_history(key: str, version: str | None) -> str | None:
    """What the verl releases say of a key this launch's verl lacks: "verl 0.2.0.post2 had it
    (removed in 0.3.0.post1)", "added in verl 0.6.0: verl 0.4.1 does not have it"; None when no
    release had it."""
    from packaging.version import InvalidVersion, Version

    doc = _history()
    for table in doc.get("keys", {}).values():
        span = table.get("partial", {}).get(key)
        if span is None:
            continue
        releases = table.get("releases", [])
        first, last = span
        try:
            here = Version(version) if version else None
        except InvalidVersion:
            here = None
        if here is not None and here > Version(last):
            after = next((r for r in releases if Version(r) > Version(last)), None)
            removed = f" (removed in {after})" if after else ""
            return f"verl {version} no longer has it; verl {last} was the last release with it{removed}"
        if here is not None and here < Version(first):
            return f"it was added in verl {first}; verl {version} does not have it"
        return f"verl {first} to {last} have it, but not this launch's config"
    return None
