#!/usr/bin/env bash
# arithmetic: CP=0 ("context parallel off") makes the data-parallel size divide by zero.
set -euo pipefail

MODEL_PATH=${MODEL_PATH:-Qwen/Qwen3-8B}
NNODES=${NNODES:-2}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
TP=${TP:-2}
PP=${PP:-2}
CP=${CP:-0}

WORLD_SIZE=$((NNODES * GPUS_PER_NODE))
DP=$((WORLD_SIZE / (TP * PP * CP)))  # expect: arithmetic
MINI_BATCH=$((DP * 8))

python3 -m verl.trainer.main_ppo \
    model_engine=megatron \
    data.train_batch_size=256 \
    actor_rollout_ref.model.path="$MODEL_PATH" \
    actor_rollout_ref.actor.ppo_mini_batch_size="$MINI_BATCH" \
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size="$TP" \
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size="$PP" \
    actor_rollout_ref.actor.megatron.context_parallel_size="$CP" \
    trainer.nnodes="$NNODES" \
    trainer.n_gpus_per_node="$GPUS_PER_NODE"
