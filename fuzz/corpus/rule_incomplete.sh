#!/usr/bin/env bash
# incomplete: cluster settings are sourced from a download, which is never followed.
set -euo pipefail

source <(curl -fsSL http://cluster-config.internal/verl_env.sh)  # expect: incomplete

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen2.5-7B-Instruct}
TRAIN_FILE=${TRAIN_FILE:-$HOME/data/gsm8k/train.parquet}
NNODES=${NNODES:-1}

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_files="$TRAIN_FILE" \
    data.train_batch_size=256 \
    actor_rollout_ref.model.path="$MODEL_PATH" \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    trainer.nnodes="$NNODES" \
    trainer.total_epochs=10
