#!/usr/bin/env bash
# budget: a wait loop with no way out never ends, so evaluation runs out of loop iterations.
set -euo pipefail

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen2.5-7B-Instruct}
TRAIN_FILE=${TRAIN_FILE:-$HOME/data/gsm8k/train.parquet}

# Wait for the Ray head node (the loop forgot its `break`).
while true; do  # expect: budget
    sleep 10
done

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_files="$TRAIN_FILE" \
    data.train_batch_size=256 \
    actor_rollout_ref.model.path="$MODEL_PATH" \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    trainer.total_epochs=10
