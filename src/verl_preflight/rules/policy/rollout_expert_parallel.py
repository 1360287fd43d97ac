"""The rollout's expert parallel size must equal its TP x DP (RolloutConfig asserts it)."""

from __future__ import annotations

from .. import Rule

ROLLOUT = "actor_rollout_ref.rollout"


class RolloutExpertParallel(Rule):
    id = "rollout-expert-parallel"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = "rollout expert_parallel_size must equal rollout TP x DP (except for trtllm)"
    why = (
        "RolloutConfig.__post_init__ asserts expert_parallel_size == tensor_model_parallel_size x "
        "data_parallel_size when EP > 1 and the rollout is not trtllm; the assertion fires when verl builds the "
        "rollout config, after the cluster is up. (A separate MoE tensor-parallel size exists only for trtllm.)"
    )
    ground_truth = "verl 0.9.1 verl/workers/config/rollout.py:294-297 (RolloutConfig.__post_init__)"
    bad = "actor_rollout_ref.rollout.tensor_model_parallel_size=8 actor_rollout_ref.rollout.expert_parallel_size=64"
    good = (
        "actor_rollout_ref.rollout.tensor_model_parallel_size=8 actor_rollout_ref.rollout.data_parallel_size=8 "
        "actor_rollout_ref.rollout.expert_parallel_size=64"
    )

    def check_launch(self, view, ctx):
        if view.value(f"{ROLLOUT}.name") == "trtllm":
            return []
        ep = view.int_value(f"{ROLLOUT}.expert_parallel_size")
        tp = view.int_value(f"{ROLLOUT}.tensor_model_parallel_size")
        dp = view.int_value(f"{ROLLOUT}.data_parallel_size")
        if ep is None or ep <= 1 or tp is None or dp is None or ep == tp * dp:
            return []
        key = f"{ROLLOUT}.expert_parallel_size"
        message = (
            f"rollout expert_parallel_size {ep} must equal tensor_model_parallel_size x data_parallel_size = "
            f"{tp}x{dp} = {tp * dp}: RolloutConfig asserts it"
        )
        return [self.finding(view.where(key), message, key)]
