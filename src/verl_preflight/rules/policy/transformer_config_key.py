"""override_transformer_config / override_mcore_model_config keys must exist.

verl hands these entries to the bridge's model provider. The known keys are the
fields of Megatron-Core's `TransformerConfig` dataclass (and its base
`ModelParallelConfig`), read from the installed megatron-core source with `ast`
(torch is never imported), plus the keys the schema lists for a backend such as
MindSpeed.
"""

from __future__ import annotations

import ast
import difflib
import importlib.util
import os
from functools import lru_cache

from .. import Rule
from ..tool.check_skipped import CheckSkipped

_FILES = (("transformer", "transformer_config.py"), ("model_parallel_config.py",))
_PREFIXES = [
    f"{role}.megatron.{node}"
    for node in ("override_transformer_config", "override_mcore_model_config")
    for role in ("actor_rollout_ref.actor", "actor_rollout_ref.ref", "critic")
]


@lru_cache(maxsize=1)
def megatron_fields() -> frozenset | None:
    """Field names of TransformerConfig and its bases; None without megatron-core."""
    try:
        spec = importlib.util.find_spec("megatron")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    classes: dict[str, tuple[list, set]] = {}
    for base in spec.submodule_search_locations:
        for parts in _FILES:
            path = os.path.join(base, "core", *parts)
            try:
                with open(path, encoding="utf-8") as fh:
                    tree = ast.parse(fh.read())
            except (OSError, SyntaxError):
                continue
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    fields = {
                        s.target.id
                        for s in node.body
                        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                    }
                    bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
                    classes[node.name] = (bases, fields)
    if "TransformerConfig" not in classes:
        return None
    out: set[str] = set()
    todo, seen = ["TransformerConfig"], set()
    while todo:
        name = todo.pop()
        if name in seen or name not in classes:
            continue
        seen.add(name)
        bases, fields = classes[name]
        out |= fields
        todo.extend(bases)
    return frozenset(out)


class TransformerConfigKey(Rule):
    id = "transformer-config-key"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = "override_transformer_config keys must be TransformerConfig fields or backend keys"
    why = (
        "verl passes these keys to the bridge's model provider: on Megatron-Bridge >= 0.5 an unknown key raises "
        "AttributeError in apply_overrides_and_finalize, on mbridge TypeError from the config constructor; "
        "only Megatron-Bridge < 0.5 falls back to setattr, where nothing reads it. Fields are read with ast "
        "from the installed megatron-core (megatron/core/transformer/transformer_config.py and "
        "model_parallel_config.py); the schema lists backend keys (MindSpeed)."
    )
    ground_truth = (
        "verl 1dda039b9 verl/workers/engine/megatron/transformer_impl.py:405-412; Megatron-Bridge >= 0.5 "
        "model_provider.py apply_overrides_and_finalize (hasattr check)"
    )
    bad = "+actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularty=full"
    good = "actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity=full"
    default_params = {"backends": ["mindspeed"], "prefixes": _PREFIXES}

    def check_launch(self, view, ctx):
        prefixes = self.params.get("prefixes", [])
        touched = [s for s in view.settings if s.kind != "delete" and any(s.key.startswith(p + ".") for p in prefixes)]
        if not touched:
            return []
        fields = megatron_fields()
        if fields is None:
            message = (
                "megatron-core is not installed: override_transformer_config keys are not "
                "checked (pip install --no-deps megatron-core==0.16.1)"
            )
            return [CheckSkipped.emit(view.loc, message)]
        known = set(fields) | ctx.schema.backend_keys(self.params.get("backends", []))
        out = []
        for s in touched:
            prefix = next(p for p in prefixes if s.key.startswith(p + "."))
            name = s.key[len(prefix) + 1 :].split(".")[0]
            if name in known:
                continue
            close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            out.append(
                self.finding(
                    s.loc,
                    f"'{name}' is not a field of Megatron-Core's TransformerConfig nor a known backend key: "
                    f"the launch fails on Megatron-Bridge >= 0.5 and mbridge, and nothing reads it on older "
                    f"bridges{hint}",
                    s.key,
                )
            )
        return out
