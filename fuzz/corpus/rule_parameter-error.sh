#!/usr/bin/env bash
# parameter-error: ${MODEL_PATH:?} stops bash whenever MODEL_PATH is not set.
set -euo pipefail

MODEL=${MODEL_PATH:?set MODEL_PATH to a HF checkpoint}  # expect: parameter-error
TRAIN_FILE=${TRAIN_FILE:-$HOME/data/gsm8k/train.parquet}

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_files="$TRAIN_FILE" \
    data.train_batch_size=256 \
    actor_rollout_ref.model.path="$MODEL" \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.rollout.n=8 \
    trainer.total_epochs=10
