#!/usr/bin/env bash
# verl#1004 (reported on verl 0.3, rebuilt on 0.4.0): Megatron, each data-parallel
# rank gets 12 samples but a normalized mini batch of 8; DataProto.make_iterator
# asserts "12 % 8 != 0" in the first actor update.
set -euo pipefail

ARGS=(
    --config-name=ppo_megatron_trainer
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=4
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=24
    data.max_prompt_length=1024
    data.max_response_length=2048
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct
    actor_rollout_ref.actor.ppo_mini_batch_size=16  # recall: error
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=1
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=1
    actor_rollout_ref.rollout.tensor_model_parallel_size=1
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
