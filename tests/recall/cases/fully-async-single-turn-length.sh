#!/usr/bin/env bash
# verl PR#6795 (verl 0.8.0): the fully-async Qwen3.5 example sets
# rollout.single_turn_response_length, which RolloutConfig does not have; the
# script cannot launch: Could not override
# 'actor_rollout_ref.rollout.single_turn_response_length'.
set -euo pipefail

ARGS=(
    --config-path=config
    --config-name=fully_async_ppo_megatron_trainer.yaml
    algorithm.adv_estimator=grpo
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=0
    data.max_prompt_length=2048
    data.max_response_length=8192
    actor_rollout_ref.model.path=Qwen/Qwen3.5-35B-A3B
    actor_rollout_ref.actor.ppo_mini_batch_size=32
    actor_rollout_ref.actor.use_dynamic_bsz=True
    actor_rollout_ref.rollout.n=8
    actor_rollout_ref.rollout.mode=async
    actor_rollout_ref.rollout.single_turn_response_length=4096  # recall: error
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.experimental.fully_async_policy.fully_async_main "${ARGS[@]}" "$@"
