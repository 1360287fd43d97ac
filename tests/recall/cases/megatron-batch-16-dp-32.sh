#!/usr/bin/env bash
# verl#1004 (reported on verl 0.3, rebuilt on 0.4.0): Megatron on 32 GPUs with TP 1,
# PP 1 gets 16 samples a step: "only support equal chunk. Got size of DataProto
# 16 and chunk 32"; 0.4.0's driver asserts it first (real_train_batch_size).
set -euo pipefail

ARGS=(
    --config-name=ppo_megatron_trainer
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=4
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=4  # recall: error
    data.max_prompt_length=1024
    data.max_response_length=2048
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct
    actor_rollout_ref.actor.ppo_mini_batch_size=4
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=1
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=1
    actor_rollout_ref.rollout.tensor_model_parallel_size=1
    trainer.nnodes=4
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
