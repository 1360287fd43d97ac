#!/usr/bin/env bash
# unknown-argument: extra overrides come from an unquoted environment variable.
set -eo pipefail

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen2.5-7B-Instruct}
TRAIN_FILE=${TRAIN_FILE:-$HOME/data/gsm8k/train.parquet}

ARGS=(
    algorithm.adv_estimator=grpo
    data.train_files="$TRAIN_FILE"
    data.train_batch_size=256
    actor_rollout_ref.model.path="$MODEL_PATH"
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.rollout.n=8
    trainer.total_epochs=10
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" $EXTRA_ARGS  # expect: unknown-argument
