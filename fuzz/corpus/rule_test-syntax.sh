#!/usr/bin/env bash
# test-syntax: an unquoted empty USE_KL leaves `[ = True ]`, a malformed test.
set -eo pipefail

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen2.5-7B-Instruct}
TRAIN_FILE=${TRAIN_FILE:-$HOME/data/gsm8k/train.parquet}
USE_KL=${USE_KL:-}

KL_ARGS=(actor_rollout_ref.actor.use_kl_loss=False)
if [ $USE_KL = True ]; then  # expect: test-syntax
    KL_ARGS=(actor_rollout_ref.actor.use_kl_loss=True actor_rollout_ref.actor.kl_loss_coef=0.001)
fi

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_files="$TRAIN_FILE" \
    data.train_batch_size=256 \
    actor_rollout_ref.model.path="$MODEL_PATH" \
    "${KL_ARGS[@]}" \
    trainer.total_epochs=10
