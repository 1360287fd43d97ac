#!/usr/bin/env bash
# config-name: verl has no ppo_megatron.yaml; the root config is ppo_megatron_trainer.
set -euo pipefail

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen3-8B}
TP=${TP:-2}

LAUNCH=(
    python3 -m verl.trainer.main_ppo
    --config-name=ppo_megatron  # expect: config-name
)

"${LAUNCH[@]}" \
    algorithm.adv_estimator=grpo \
    data.train_batch_size=256 \
    actor_rollout_ref.model.path="$MODEL_PATH" \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size="$TP" \
    actor_rollout_ref.rollout.n=8 \
    trainer.total_epochs=10
