#!/usr/bin/env bash
# readonly: TP is declared readonly, then the NPU branch tries to change it.
set -eo pipefail

DEVICE=${DEVICE:-gpu}
MODEL_PATH=${MODEL_PATH:-Qwen/Qwen2.5-7B-Instruct}
readonly TP=2

if [ "$DEVICE" = npu ]; then
    TP=4  # expect: readonly
fi

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_batch_size=256 \
    actor_rollout_ref.model.path="$MODEL_PATH" \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.rollout.tensor_model_parallel_size="$TP" \
    trainer.total_epochs=10
