#!/usr/bin/env bash
# verl PR#7430 (verl 0.9.0): repetition_penalty is read by the vLLM server but is
# not a key of rollout.yaml: Could not override
# 'actor_rollout_ref.rollout.repetition_penalty'.
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=grpo
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
    actor_rollout_ref.rollout.n=4
    actor_rollout_ref.rollout.tensor_model_parallel_size=2
    actor_rollout_ref.rollout.repetition_penalty=1.05  # recall: error
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
