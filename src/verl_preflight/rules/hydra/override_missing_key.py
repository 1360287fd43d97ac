"""`key=value` on a key verl's config does not have."""

from __future__ import annotations

from .. import Rule


class OverrideMissingKey(Rule):
    id = "override-missing-key"
    severity = "error"
    stage = "hydra"
    summary = "`key=value` on a key verl's config does not have"
    why = "In struct mode Hydra only overrides existing keys; a new key needs `+` (or `++`)."
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
        "Anything else (two close keys, a dict-typed field with a close key, a type the tool cannot read) "
        "is left to you."
    )
