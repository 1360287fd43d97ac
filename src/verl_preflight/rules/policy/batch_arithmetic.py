"""Batch sizes verl checks at start-up, where they are static.

Mirrors verl 0.9.1, for entry points that run validate_config (main_ppo;
read from the entry's source) and only where dynamic batch size is off (as verl does):
- verl/workers/config/actor.py `ActorConfig.__post_init__`: exactly one of
  ppo_micro_batch_size and ppo_micro_batch_size_per_gpu is set;
- `ActorConfig.validate`: train_batch_size >= ppo_mini_batch_size;
  ppo_mini_batch_size divisible by ppo_micro_batch_size;
  ppo_micro_batch_size x ulysses_sequence_parallel_size >= the number of GPUs;
- verl/utils/config.py `validate_config`: train_batch_size x rollout.n divisible
  by the minimal batch (Megatron: data-parallel size x ppo_micro_batch_size_per_gpu,
  with DP = GPUs / (TP x PP x CP); otherwise the number of GPUs).
"""

from __future__ import annotations

from .. import Rule

ACTOR = "actor_rollout_ref.actor"


class BatchArithmetic(Rule):
    id = "batch-arithmetic"
    severity = "error"
    stage = "policy"
    scope = "launch"
    summary = "the batch-size checks verl runs at start-up, where the values are static"
    why = (
        "verl's driver validates batch sizes before Ray starts; a wrong one stops the launch (TypeError or "
        "AssertionError), or the actor's own dataclass asserts inside a worker."
    )
    ground_truth = (
        "verl 0.9.1 verl/utils/config.py validate_config (:118), verl/workers/config/actor.py "
        "ActorConfig.__post_init__ and ActorConfig.validate"
    )
    bad = "data.train_batch_size=64 actor_rollout_ref.actor.ppo_mini_batch_size=128"
    good = "data.train_batch_size=128 actor_rollout_ref.actor.ppo_mini_batch_size=64"

    def check_launch(self, view, ctx):
        if not view.entry_calls("validate_config"):
            return []  # e.g. main_generation_server never validates actor batches
        if view.value(f"{ACTOR}.use_dynamic_bsz") is not False:
            return []
        out = []

        def report(key, message):
            out.append(self.finding(view.where(key), message, key))

        micro = view.value(f"{ACTOR}.ppo_micro_batch_size")
        per_gpu = view.value(f"{ACTOR}.ppo_micro_batch_size_per_gpu")
        if micro is not None and per_gpu is not None and view.setting(f"{ACTOR}.ppo_micro_batch_size"):
            report(
                f"{ACTOR}.ppo_micro_batch_size",
                "set either actor.ppo_micro_batch_size_per_gpu or the deprecated ppo_micro_batch_size, not both",
            )
        elif micro is None and per_gpu is None:
            report(
                f"{ACTOR}.ppo_mini_batch_size",
                "without dynamic batch size verl needs actor.ppo_micro_batch_size_per_gpu",
            )
        train = view.int_value("data.train_batch_size")
        mini = view.int_value(f"{ACTOR}.ppo_mini_batch_size")
        if train is not None and mini is not None and train < mini:
            report(
                f"{ACTOR}.ppo_mini_batch_size",
                f"data.train_batch_size ({train}) must be >= actor.ppo_mini_batch_size ({mini})",
            )
        _real_batch(view, train, report)
        micro_n = view.int_value(f"{ACTOR}.ppo_micro_batch_size")
        if micro_n and mini is not None:
            if mini % micro_n:
                report(
                    f"{ACTOR}.ppo_micro_batch_size",
                    f"ppo_mini_batch_size ({mini}) must be divisible by ppo_micro_batch_size ({micro_n})",
                )
            nnodes, per_node = view.int_value("trainer.nnodes"), view.int_value("trainer.n_gpus_per_node")
            sp = view.int_value(f"{ACTOR}.ulysses_sequence_parallel_size") or 1
            if nnodes and per_node and micro_n * sp < nnodes * per_node:
                report(
                    f"{ACTOR}.ppo_micro_batch_size",
                    f"ppo_micro_batch_size ({micro_n}) x ulysses_sequence_parallel_size ({sp}) must be >= "
                    f"the number of GPUs ({nnodes * per_node})",
                )
        return out


def _real_batch(view, train, report) -> None:
    nnodes, per_node = view.int_value("trainer.nnodes"), view.int_value("trainer.n_gpus_per_node")
    n = view.int_value("actor_rollout_ref.rollout.n")
    if not (train and nnodes and per_node and n):
        return
    gpus = nnodes * per_node
    if view.value(f"{ACTOR}.strategy") == "megatron":
        mp = [
            view.int_value(f"{ACTOR}.megatron.{k}")
            for k in ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size")
        ]
        per_gpu = view.int_value(f"{ACTOR}.ppo_micro_batch_size_per_gpu")
        if None in mp or not per_gpu or min(mp) < 1 or gpus % (mp[0] * mp[1] * mp[2]):
            return  # the parallelism rule reports a layout that does not divide
        minimal = gpus // (mp[0] * mp[1] * mp[2]) * per_gpu
    else:
        minimal = gpus
    if (train * n) % minimal:
        report(
            "data.train_batch_size",
            f"train_batch_size x rollout.n = {train}x{n} = {train * n} must be divisible by the minimal "
            f"batch {minimal} (verl's validate_config)",
        )
