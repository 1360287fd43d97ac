#!/usr/bin/env bash
# PRIME-RL/TTRL#43 and verl PR#552 (verl 0.5.0): ppo_mini_batch_size x rollout.n is
# smaller than the data-parallel size, so the per-GPU mini batch becomes 0:
# AssertionError: ppo_mini_batch_size 0 should be larger than 0 after
# normalization.
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=2
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=4
    data.max_prompt_length=1024
    data.max_response_length=2048
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct
    actor_rollout_ref.actor.ppo_mini_batch_size=2  # recall: error
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1
    actor_rollout_ref.rollout.tensor_model_parallel_size=1
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
