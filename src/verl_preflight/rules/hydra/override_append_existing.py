"""`+key=value` on a key that already has a value."""

from __future__ import annotations

from ...core.edits import Fix
from ...hydra_stage.check import lookup
from ...hydra_stage.problems import HydraKind
from .. import Rule


class OverrideAppendExisting(Rule):
    id = "override-append-existing"
    severity = "error"
    stage = "hydra"
    problem = HydraKind.APPEND_EXISTING  # the Hydra stage problem it reports
    summary = "`+key=value` on a key that already has a value"
    why = "`+` adds a key; Hydra refuses it over an existing non-null value. Drop the `+`, or use `++`."
    ground_truth = (
        "hydra-core 1.3.8 hydra/_internal/config_loader_impl.py:378-382 "
        "(_apply_overrides_to_config: 'Could not append to config')"
    )
    bad = "+actor_rollout_ref.actor.megatron.use_mbridge=True"
    good = "actor_rollout_ref.actor.megatron.use_mbridge=True"
    fixable = True
    fix_doc = "drops the `+` (inside the quotes it sits in), unless the item is a dict or list, which `+` merges into."

    @staticmethod
    def repair(problem, text: str, tree: dict, source):
        """Drop the `+`, unless the item is a dict or list (`+` merges into those: no problem there)."""
        key = problem.key
        found, node = lookup(tree, key)
        if found and isinstance(node, (dict, list)):
            return None
        return Fix.drop_plus(text, key)
