"""A `+key` that adds a field the config's dataclass does not have passes Hydra and fails in verl.

verl turns a config section with a `_target_` into its dataclass where its code
calls `omega_conf_to_dataclass` on that section (`hydra.utils.instantiate`,
recursively): which sections those are is read from the call sites of the
launch's verl (verl_preflight.sources.verl_builds); a section nothing builds is a
plain config, whatever its `_target_`. The fields come from the same verl, read
with `ast` (verl_preflight.sources.verl_dataclasses); dict-typed fields take any key.
"""

from __future__ import annotations

import difflib

from ...sources import find_verl_root, verl_dataclasses
from ...sources.verl_builds import built_suffixes, is_built
from .. import Rule


def dataclass_registry(view):
    """The config dataclasses of the verl tree the launch composes against; None without its source."""
    return registry_of(view.source)


def registry_of(source):
    """The config dataclasses of a verl config source; None without its Python source."""
    root = _package_root(source)
    return verl_dataclasses(root) if root else None


def owner_of(view, key: str):
    """(target, relative parts): the deepest dataclass verl builds above `key` in the composed tree."""
    return owner_in(view.tree, key, view.source)


def owner_in(tree: dict, key: str, source=None):
    """(target, relative parts): the deepest `_target_` node above `key` in `tree` whose section
    verl builds (verl_builds: read from the verl of `source`; every `_target_` when it cannot tell)."""
    parts = key.split(".")
    root = _package_root(source)
    suffixes = built_suffixes(root) if root else None
    node, target, depth = tree, None, 0
    for i, part in enumerate(parts[:-1]):
        if not isinstance(node, dict) or part not in node:
            break
        node = node[part]
        if isinstance(node, dict) and isinstance(node.get("_target_"), str):
            if is_built(suffixes, parts[: i + 1]) is not False:
                target, depth = node["_target_"], i + 1
    return target, parts[depth:]


def _package_root(source) -> str | None:
    if source is None:
        return None
    return source.package_root or find_verl_root(source.path)


def field_owner(registry, target: str, rel: list[str]):
    """(class target, field, status): follow nested dataclass fields down `rel`.

    status: "field" (rel names a field), "missing" (the class has no such field),
    "open" (a dict-typed or unknown-typed field takes the rest), None (cannot tell)."""
    while rel:
        fields = registry.fields(target)
        if fields is None or registry.missing_bases(target):
            return target, rel[0], None
        name = rel[0]
        if name not in fields:
            return target, name, "missing"
        if len(rel) == 1:
            return target, name, "field"
        kind = registry.field_kind(target, name)
        if kind == "dataclass":
            nested = registry.nested_target(target, name)
            if nested is None:
                return target, name, None
            target, rel = nested, rel[1:]
            continue
        return target, name, "open"
    return target, None, None


def addable(source, tree: dict, key: str) -> str | None:
    """What `+key` adds, for a key the composed `tree` lacks: "field" (a field of the dataclass its
    section becomes, absent from the YAML), "open" (a key of a dict-typed field, which takes any),
    "missing" (the dataclass has no such field: verl would fail), "plain" (no dataclass owns the
    section), None (cannot tell: no verl source, or a field of a type not read)."""
    target, rel = owner_in(tree, key, source)
    if target is None:
        return "plain"
    registry = registry_of(source)
    if registry is None or not rel:
        return None
    return field_owner(registry, target, rel)[2]


class ConfigField(Rule):
    id = "config-field"
    severity = "error"
    concern = "key"  # one mistake with the other rules that say a key cannot be here
    stage = "policy"
    scope = "launch"
    reads_verls_workers = True
    summary = "a `+key` that adds a field the config's dataclass does not have"
    why = (
        "Hydra accepts `+key=value` anywhere, but verl turns each config section with a `_target_` into its "
        "dataclass; a key the dataclass lacks makes that fail (TypeError: unexpected keyword argument), often "
        "inside a Ray worker after the cluster is up. Dict-typed fields (override_transformer_config, "
        "engine_kwargs, ...) take any key; a `+key` that adds a real field missing from the YAML is fine."
    )
    ground_truth = (
        "verl 0.9.1 verl/utils/config.py:23-51 omega_conf_to_dataclass (hydra.utils.instantiate of the section's "
        "_target_) and its call sites (workers/engine_workers.py:553,593,651 for ref, actor and rollout); the "
        "fields of verl/workers/config/*.py, verl/trainer/config/*.py, verl/base_config.py. RewardConfig "
        "(workers/config/reward.py:94) is built nowhere: experimental/reward_loop/reward_manager/dapo.py:33-35 "
        "reads reward.reward_kwargs from the plain config"
    )
    bad = "+actor_rollout_ref.rollout.limit_imgs=4"
    good = "+actor_rollout_ref.rollout.engine_kwargs.vllm.limit_mm_per_prompt=4"

    def check_launch(self, view, ctx):
        added = [s for s in view.settings if s.kind in ("add", "force_add")]
        if not added:
            return []
        registry = dataclass_registry(view)
        if registry is None:
            return []
        out = []
        for s in added:
            target, rel = owner_of(view, s.key)
            if target is None or not rel:
                continue
            cls, name, status = field_owner(registry, target, rel)
            if status != "missing":
                continue
            fields = sorted(registry.fields(cls) or ())
            close = difflib.get_close_matches(name, fields, n=1, cutoff=0.75)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            version = view.verl_version
            message = (
                f"{cls.rsplit('.', 1)[-1]} (verl {version}) has no field '{name}': Hydra adds it, then verl fails "
                f"building the config (TypeError: unexpected keyword argument){hint}"
            )
            out.append(self.finding(s.loc, message, s.key))
        return out
