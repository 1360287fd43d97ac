#!/usr/bin/env bash
# verl#473, comment of 2025-08-03 (verl 0.5.0): 3 nodes x 16 GPUs, a train batch
# divisible by 16 but not by 48; "only support equal chunk" at dispatch, and
# the driver's real_train_batch_size check says the same first.
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=8
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=32  # recall: error
    data.max_prompt_length=1024
    data.max_response_length=2048
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct
    actor_rollout_ref.actor.ppo_mini_batch_size=16
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4
    actor_rollout_ref.rollout.tensor_model_parallel_size=2
    trainer.nnodes=3  # recall: error
    trainer.n_gpus_per_node=16
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
