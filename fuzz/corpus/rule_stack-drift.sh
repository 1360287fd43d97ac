#!/usr/bin/env bash
# stack-drift: the header names Megatron-Bridge v0.4.0, but requirements-ascend.txt
# (next to this script) pins v0.5.0, so users install a stack the header does
# not describe.
#
# Requirements on Ascend with MindSpeed-Bridge (USE_MINDSPEED_BRIDGE=True)
#   - Megatron-LM core_v0.18.0
#   - Megatron-Bridge v0.4.0  # expect: stack-drift
#   - MindSpeed core_r0.18.0
#   - MindSpeed-Bridge master
#
set -euo pipefail

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen3-8B}

ACTOR=(
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.actor.ppo_mini_batch_size=64
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4
    actor_rollout_ref.actor.megatron.use_mbridge=True
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=2
)

python3 -m verl.trainer.main_ppo \
    model_engine=megatron \
    algorithm.adv_estimator=grpo \
    data.train_batch_size=256 \
    actor_rollout_ref.model.path="$MODEL_PATH" \
    actor_rollout_ref.rollout.n=8 \
    "${ACTOR[@]}" \
    trainer.device=npu \
    trainer.nnodes=1 \
    trainer.n_gpus_per_node=16 \
    trainer.total_epochs=10 \
    "$@"
