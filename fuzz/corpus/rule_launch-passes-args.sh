#!/usr/bin/env bash
# launch-passes-args: the launch does not end with "$@", so a user cannot add
# or override a setting on the command line (`bash bad.sh trainer.total_epochs=1`).
set -euo pipefail

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen3-8B}

ARGS=(
    model_engine=megatron
    algorithm.adv_estimator=grpo
    data.train_batch_size=256
    actor_rollout_ref.model.path="$MODEL_PATH"
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.actor.ppo_mini_batch_size=64
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4
    actor_rollout_ref.actor.megatron.use_mbridge=True
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=2
    actor_rollout_ref.rollout.n=8
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=10
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}"  # expect: launch-passes-args
