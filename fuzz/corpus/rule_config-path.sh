#!/usr/bin/env bash
# config-path: the launch reads a private config folder, so its overrides go unchecked.
set -euo pipefail

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen2.5-7B-Instruct}
TRAIN_FILE=${TRAIN_FILE:-$HOME/data/gsm8k/train.parquet}

HYDRA_ARGS=(
    --config-path=/opt/my_recipes/config  # expect: config-path
    --config-name=ppo_trainer
)

python3 -m verl.trainer.main_ppo \
    "${HYDRA_ARGS[@]}" \
    algorithm.adv_estimator=grpo \
    data.train_files="$TRAIN_FILE" \
    data.train_batch_size=256 \
    actor_rollout_ref.model.path="$MODEL_PATH" \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    trainer.total_epochs=10
