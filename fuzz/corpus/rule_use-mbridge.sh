#!/usr/bin/env bash
# use-mbridge: the Megatron engine asserts use_mbridge is True (verl PR #4530);
# these Ascend-style overrides still pass False (the mistake verl PR #6429 fixed).
set -euo pipefail

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen3-8B}
TP=${TP:-2}
PP=${PP:-2}

ACTOR=(
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.actor.ppo_mini_batch_size=64
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4
    actor_rollout_ref.actor.megatron.use_mbridge=False  # expect: use-mbridge
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size="$TP"
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size="$PP"
)

REF=(
    actor_rollout_ref.ref.megatron.use_mbridge=False  # expect: use-mbridge
    actor_rollout_ref.ref.megatron.tensor_model_parallel_size="$TP"
    actor_rollout_ref.ref.megatron.pipeline_model_parallel_size="$PP"
)

python3 -m verl.trainer.main_ppo \
    --config-name=ppo_megatron_trainer \
    algorithm.adv_estimator=grpo \
    data.train_batch_size=256 \
    actor_rollout_ref.model.path="$MODEL_PATH" \
    actor_rollout_ref.rollout.n=8 \
    "${ACTOR[@]}" \
    "${REF[@]}" \
    trainer.device=npu \
    trainer.nnodes=1 \
    trainer.n_gpus_per_node=8 \
    trainer.total_epochs=10 \
    "$@"
