#!/usr/bin/env bash
# Jiayi-Pan/TinyZero#47 (TinyZero's own verl copy, 2025-02; rebuilt on verl 0.4.0):
# a train batch of 2 prompts on 4 GPUs: "only support equal chunk. Got size of
# DataProto 2 and chunk 4" (the batch must be a multiple of the GPU count);
# verl 0.4.0's start-up check says the same first.
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=gae
    data.train_files="${HOME}/data/countdown/train.parquet"
    data.val_files="${HOME}/data/countdown/test.parquet"
    data.train_batch_size=2  # recall: error
    data.max_prompt_length=256
    data.max_response_length=1024
    actor_rollout_ref.model.path=Qwen/Qwen2.5-3B
    critic.model.path=Qwen/Qwen2.5-3B
    actor_rollout_ref.actor.ppo_mini_batch_size=2
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
    critic.ppo_mini_batch_size=2
    critic.ppo_micro_batch_size_per_gpu=1
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1
    actor_rollout_ref.rollout.tensor_model_parallel_size=2
    trainer.nnodes=1
    trainer.n_gpus_per_node=4  # recall: error
    trainer.total_epochs=15
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
