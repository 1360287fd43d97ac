#!/usr/bin/env bash
# ustc-time-series/Time-R1#8 (2025-10; rebuilt on verl 0.4.0): the project's
# instructions point the custom reward at reward/rewaed_old.py, a file the
# repository does not have (the maintainers: a typo for reward/reward.py). verl
# loads the reward function before training: FileNotFoundError: Reward function
# file '...' not found.
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=8
    data.train_files="${HOME}/data/time/train.parquet"
    data.val_files="${HOME}/data/time/test.parquet"
    data.train_batch_size=64
    data.max_prompt_length=1024
    data.max_response_length=1024
    custom_reward_function.path=reward/rewaed_old.py  # recall: warning
    custom_reward_function.name=compute_score
    actor_rollout_ref.model.path=Qwen/Qwen2.5-3B-Instruct
    actor_rollout_ref.actor.ppo_mini_batch_size=32
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8
    actor_rollout_ref.rollout.tensor_model_parallel_size=1
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
