"""Policy rules: data policies from the schema and named rules in code.

A launch rule looks at one launch in one profile (a LaunchView); a script rule
looks at the script as a whole. `run_launch_rules` and `run_script_rules` apply
every policy of the schema.
"""

from __future__ import annotations

from . import batch_arithmetic, duplicate_key, launch_passes_args, parallelism, stack_drift, transformer_config_keys
from .policies import KINDS

NAMED_RULES = {
    "transformer_config_keys": transformer_config_keys,
    "parallelism": parallelism,
    "batch_arithmetic": batch_arithmetic,
    "duplicate_key": duplicate_key,
    "stack_drift": stack_drift,
    "launch_passes_args": launch_passes_args,
}


def run_launch_rules(schema, view, ctx) -> list:
    out = []
    for policy in schema.policies:
        if policy.kind is not None:
            out.extend(KINDS[policy.kind](policy, view))
            continue
        module = NAMED_RULES[policy.rule]
        if module.SCOPE == "launch":
            out.extend(module.check(policy, view, ctx))
    return out


def run_script_rules(schema, script_ctx) -> list:
    out = []
    for policy in schema.policies:
        if policy.rule is None:
            continue
        module = NAMED_RULES[policy.rule]
        if module.SCOPE == "script":
            out.extend(module.check(policy, script_ctx))
    return out
