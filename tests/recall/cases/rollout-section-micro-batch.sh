#!/usr/bin/env bash
# verl PR#4773 (verl 0.6.1): the GRPO usage example put the actor's micro batch
# under the rollout section: Could not override
# 'actor_rollout_ref.rollout.ppo_micro_batch_size_per_gpu'.
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=grpo
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=1024
    data.max_prompt_length=1024
    data.max_response_length=512
    actor_rollout_ref.model.path=Qwen/Qwen2.5-0.5B-Instruct
    actor_rollout_ref.actor.ppo_mini_batch_size=256
    actor_rollout_ref.rollout.ppo_micro_batch_size_per_gpu=32  # recall: error
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=32
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=32
    actor_rollout_ref.rollout.n=5
    actor_rollout_ref.rollout.tensor_model_parallel_size=2
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
