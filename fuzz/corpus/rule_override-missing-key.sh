#!/usr/bin/env bash
# override-missing-key: use_flash_attn is not in override_transformer_config; it needs `+`.
set -euo pipefail

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen3-8B}
TP=${TP:-2}
PP=${PP:-2}

ACTOR=(
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.actor.ppo_mini_batch_size=64
    actor_rollout_ref.actor.megatron.use_mbridge=True
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size="$TP"
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size="$PP"
    actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True  # expect: override-missing-key
)

python3 -m verl.trainer.main_ppo \
    model_engine=megatron \
    algorithm.adv_estimator=grpo \
    data.train_batch_size=256 \
    actor_rollout_ref.model.path="$MODEL_PATH" \
    actor_rollout_ref.rollout.n=8 \
    "${ACTOR[@]}" \
    trainer.total_epochs=10
