#!/usr/bin/env bash
# qwen35-gpu-bshd: a Qwen3 launch reused for Qwen3.5 keeps remove-padding and
# dynamic batch size on; on GPU Megatron-LM's Gated Delta Net has no packed
# (THD) path, so Qwen3.5 must run padded (BSHD) batches.
set -euo pipefail

DEVICE=${DEVICE:-gpu}
MODEL_PATH=${MODEL_PATH:-Qwen/Qwen3.5-35B-A3B}

MODEL=(
    actor_rollout_ref.model.path="${MODEL_PATH}"
    actor_rollout_ref.model.use_remove_padding=True  # expect: qwen35-gpu-bshd
)

ACTOR=(
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.actor.ppo_mini_batch_size=16
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
    actor_rollout_ref.actor.use_dynamic_bsz=True  # expect: qwen35-gpu-bshd
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=8192
    actor_rollout_ref.actor.megatron.use_mbridge=True
    actor_rollout_ref.actor.megatron.use_remove_padding=True  # expect: qwen35-gpu-bshd
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2
    actor_rollout_ref.actor.megatron.expert_model_parallel_size=8
    actor_rollout_ref.actor.megatron.expert_tensor_parallel_size=1
)

case "${DEVICE}" in
    gpu)
        export CUDA_DEVICE_MAX_CONNECTIONS=1
        ;;
    npu)
        ACTOR+=(trainer.device=npu)
        ;;
esac

python3 -m verl.trainer.main_ppo \
    model_engine=megatron \
    algorithm.adv_estimator=grpo \
    data.train_batch_size=64 \
    actor_rollout_ref.rollout.n=5 \
    actor_rollout_ref.rollout.tensor_model_parallel_size=8 \
    "${MODEL[@]}" \
    "${ACTOR[@]}" \
    trainer.nnodes=1 \
    trainer.n_gpus_per_node=8 \
    trainer.total_epochs=15 \
    "$@"
