#!/usr/bin/env bash
# unbound-variable: under `set -u`, the DEVICE test stops bash when DEVICE is not set.
set -euo pipefail

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen2.5-7B-Instruct}
TRAIN_FILE=${TRAIN_FILE:-$HOME/data/gsm8k/train.parquet}
N_PER_NODE=8

if [ "$DEVICE" = npu ]; then  # expect: unbound-variable
    N_PER_NODE=16
fi

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_files="$TRAIN_FILE" \
    data.train_batch_size=256 \
    actor_rollout_ref.model.path="$MODEL_PATH" \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    trainer.n_gpus_per_node="$N_PER_NODE" \
    trainer.total_epochs=10
