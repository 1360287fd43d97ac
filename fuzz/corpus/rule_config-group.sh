#!/usr/bin/env bash
# config-group: model_engine=megatorn is a typo; the group has no such option.
set -euo pipefail

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen3-8B}
TP=${TP:-2}

ENGINE=(
    model_engine=megatorn  # expect: config-group
)

python3 -m verl.trainer.main_ppo \
    "${ENGINE[@]}" \
    algorithm.adv_estimator=grpo \
    data.train_batch_size=256 \
    actor_rollout_ref.model.path="$MODEL_PATH" \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size="$TP" \
    actor_rollout_ref.rollout.n=8 \
    trainer.total_epochs=10
