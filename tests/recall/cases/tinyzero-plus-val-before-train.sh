#!/usr/bin/env bash
# Jiayi-Pan/TinyZero#17 (TinyZero's own verl copy, 2025-01): its train_tiny_zero.sh
# writes +trainer.val_before_train=False, which that copy needed; verl 0.3 moved
# the key into ppo_trainer.yaml (verl PR#820), so on released verl the same line
# stops the launch: Could not append to config. An item is already at
# 'trainer.val_before_train'.
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=gae
    data.train_files="${HOME}/data/countdown/train.parquet"
    data.val_files="${HOME}/data/countdown/test.parquet"
    data.train_batch_size=256
    data.max_prompt_length=256
    data.max_response_length=1024
    actor_rollout_ref.model.path=Qwen/Qwen2.5-3B
    critic.model.path=Qwen/Qwen2.5-3B
    actor_rollout_ref.actor.ppo_mini_batch_size=128
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4
    critic.ppo_micro_batch_size_per_gpu=4
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4
    actor_rollout_ref.rollout.tensor_model_parallel_size=2
    trainer.logger=[console]
    +trainer.val_before_train=False  # recall: error
    trainer.nnodes=1
    trainer.n_gpus_per_node=2
    trainer.total_epochs=15
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
