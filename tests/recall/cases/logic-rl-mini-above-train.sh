#!/usr/bin/env bash
# Unakar/Logic-RL#56 (Logic-RL's own verl copy, 2025-03; rebuilt on verl 0.4.1):
# Logic-RL's GRPO script trains 16 prompts per step with a PPO mini batch of 256
# (the reporter asks why the mini batch may exceed the train batch); released
# verl asserts config.data.train_batch_size >= actor.ppo_mini_batch_size.
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=8
    data.train_files="${HOME}/data/kk/instruct/3ppl/train.parquet"
    data.val_files="${HOME}/data/kk/instruct/3ppl/test.parquet"
    data.train_batch_size=16  # recall: error
    data.max_prompt_length=512
    data.max_response_length=2048
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct-1M
    actor_rollout_ref.model.use_remove_padding=True
    actor_rollout_ref.actor.ppo_mini_batch_size=256  # recall: error
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=16
    actor_rollout_ref.actor.use_kl_loss=True
    actor_rollout_ref.actor.kl_loss_coef=0.001
    actor_rollout_ref.actor.kl_loss_type=low_var_kl
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=40
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=40
    actor_rollout_ref.rollout.tensor_model_parallel_size=2
    actor_rollout_ref.rollout.gpu_memory_utilization=0.6
    trainer.nnodes=1
    trainer.n_gpus_per_node=4
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
