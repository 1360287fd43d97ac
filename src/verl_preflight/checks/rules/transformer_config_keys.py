"""override_transformer_config / override_mcore_model_config keys must exist.

verl hands these entries to the Megatron-Bridge model provider; on the path
without `apply_overrides_and_finalize` it uses `setattr`, so a misspelled key
is silently ignored at run time. The known keys are the fields of
Megatron-Core's `TransformerConfig` dataclass (and its base
`ModelParallelConfig`), read from the installed megatron-core source with
`ast` (torch is never imported), plus the keys the schema lists for a backend
such as MindSpeed.
"""

from __future__ import annotations

import ast
import difflib
import importlib.util
import os
from functools import lru_cache

from ...findings import Finding

SCOPE = "launch"
_FILES = (("transformer", "transformer_config.py"), ("model_parallel_config.py",))


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


def check(policy, view, ctx) -> list[Finding]:
    fields = megatron_fields()
    prefixes = policy.params.get("prefixes", [])
    touched = [s for s in view.settings if s.kind != "delete" and any(s.key.startswith(p + ".") for p in prefixes)]
    if not touched:
        return []
    if fields is None:
        if ctx.once("transformer-config-skipped"):
            return [
                Finding.at(
                    view.loc,
                    policy.id,
                    "info",
                    "megatron-core is not installed: override_transformer_config keys are not "
                    "checked (pip install --no-deps megatron-core==0.16.1)",
                )
            ]
        return []
    known = set(fields) | ctx.schema.backend_keys(policy.params.get("backends", []))
    out = []
    for s in touched:
        prefix = next(p for p in prefixes if s.key.startswith(p + "."))
        name = s.key[len(prefix) + 1 :].split(".")[0]
        if name in known:
            continue
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        out.append(
            Finding.at(
                s.loc,
                policy.id,
                policy.severity,
                f"'{name}' is not a field of Megatron-Core's TransformerConfig nor a known "
                f"backend key: verl would set it with setattr and nothing would read it{hint}",
                s.key,
            )
        )
    return out
