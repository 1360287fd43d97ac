"""use_mbridge must be True for every Megatron role where the Megatron engine runs."""

from __future__ import annotations

from ..data_policies import RequiredValue


class UseMbridge(RequiredValue):
    id = "use-mbridge"
    severity = "error"
    summary = "use_mbridge must be True for every Megatron role where the Megatron engine runs"
    why = (
        "Since verl PR #4528 (commit d7c82bdec) the Megatron engine asserts `use_mbridge must be True` when it "
        "starts; False fails the launch after the cluster is up (verl PR #6429 fixed two Ascend scripts that "
        "still passed it)."
    )
    ground_truth = "verl 1dda039b9 verl/workers/engine/megatron/transformer_impl.py:191 (AssertionError)"
    bad = "actor_rollout_ref.actor.megatron.use_mbridge=False"
    good = "actor_rollout_ref.actor.megatron.use_mbridge=True"
    fixable = True
    fix_doc = (
        "sets the value the script wrote to True (a value the script does not write, or builds from a "
        "variable, is left to you)."
    )
    spec = {
        "when": {"engine": "megatron"},
        "keys": {
            "actor_rollout_ref.actor.megatron.use_mbridge": True,
            "actor_rollout_ref.ref.megatron.use_mbridge": True,
            "critic.megatron.use_mbridge": True,
        },
        "message": "{key} is {value}: the Megatron engine asserts use_mbridge must be True "
        "(verl PR #4528, transformer_impl.py); set {key}=True",
    }
