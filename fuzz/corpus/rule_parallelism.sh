#!/usr/bin/env bash
# parallelism: TP=3 does not divide a world of 8 devices (1 node x 8), and a
# rollout TP of 16 does not divide it either.
set -euo pipefail

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen3-8B}
NNODES=${NNODES:-1}
NGPUS_PER_NODE=${NGPUS_PER_NODE:-8}
TP=${TP:-3}
PP=${PP:-1}
ROLLOUT_TP=${ROLLOUT_TP:-16}

ACTOR=(
    actor_rollout_ref.actor.optim.lr=1e-6
    actor_rollout_ref.actor.ppo_mini_batch_size=64
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4
    actor_rollout_ref.actor.megatron.use_mbridge=True
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size="$TP"  # expect: parallelism
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size="$PP"
)

REF=(
    actor_rollout_ref.ref.megatron.tensor_model_parallel_size="$TP"  # expect: parallelism
    actor_rollout_ref.ref.megatron.pipeline_model_parallel_size="$PP"
)

ROLLOUT=(
    actor_rollout_ref.rollout.n=8
    actor_rollout_ref.rollout.tensor_model_parallel_size="$ROLLOUT_TP"  # expect: parallelism
)

python3 -m verl.trainer.main_ppo \
    model_engine=megatron \
    algorithm.adv_estimator=grpo \
    data.train_batch_size=256 \
    actor_rollout_ref.model.path="$MODEL_PATH" \
    "${ACTOR[@]}" \
    "${REF[@]}" \
    "${ROLLOUT[@]}" \
    trainer.nnodes="$NNODES" \
    trainer.n_gpus_per_node="$NGPUS_PER_NODE" \
    trainer.total_epochs=10 \
    "$@"
