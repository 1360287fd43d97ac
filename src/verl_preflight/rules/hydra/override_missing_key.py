"""`key=value` on a key verl's config does not have."""

from __future__ import annotations

from ...edits import Fix
from ...hydra_stage.check import close_keys, lookup, typo_of

from ...hydra_stage.problems import HydraKind
from .. import Rule


class OverrideMissingKey(Rule):
    id = "override-missing-key"
    severity = "error"
    stage = "hydra"
    problem = HydraKind.MISSING_KEY  # the Hydra stage problem it reports
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

    @staticmethod
    def repair(text: str, key: str, tree: dict, source):
        """The repair the composition says is right (fix_doc): `+` where the key may be added (a
        field of the dataclass its section becomes, absent from the YAML; a new key of a dict-typed
        field with no existing key close to it); the one existing key a typo means, where `+` would
        not do. A close key that is no typo (grad_offload and param_offload) is a hint, never a fix."""
        from ..policy.config_field import addable

        status = addable(source, tree, key)
        if status == "field" or status == "open" and not close_keys(tree, key, 1):
            return Fix.add_plus(text, key)
        meant = typo_of(tree, key)
        if meant is not None and status in ("missing", "plain"):
            found, node = lookup(tree, meant)
            if found and not isinstance(node, (dict, list)):
                return Fix.rename_key(text, key, meant)
        return None
