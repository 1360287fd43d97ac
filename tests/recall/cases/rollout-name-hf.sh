#!/usr/bin/env bash
# verl#4424 (verl 0.7.0): the launch selects the HF rollout, which 0.7.0 no longer
# registers: AssertionError: Rollout hf with mode async not found.
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=4
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=64
    data.max_prompt_length=1024
    data.max_response_length=2048
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct
    actor_rollout_ref.actor.ppo_mini_batch_size=32
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8
    actor_rollout_ref.rollout.name=hf  # recall: error
    actor_rollout_ref.rollout.tensor_model_parallel_size=1
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
