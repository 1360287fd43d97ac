#!/usr/bin/env bash
# unset-variable: under `set -u`, TRAIN_FILE is used but never assigned.
set -euo pipefail

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen2.5-7B-Instruct}
TEST_FILE=${TEST_FILE:-$HOME/data/gsm8k/test.parquet}

DATA=(
    data.train_files="$TRAIN_FILE"  # expect: unset-variable
    data.val_files="$TEST_FILE"
    data.train_batch_size=256
    data.max_prompt_length=512
)

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    "${DATA[@]}" \
    actor_rollout_ref.model.path="$MODEL_PATH" \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.rollout.n=8 \
    trainer.total_epochs=10
