#!/usr/bin/env bash
# verl#1004 (reported on verl 0.3, rebuilt on 0.4.0): Megatron with a virtual
# pipeline and PP 2, but one micro batch per mini batch: Megatron raises
# "The number of contiguous micro-batches in a virtual pipeline stage should
# range in [PP=2 , M=1]".
set -euo pipefail

ARGS=(
    --config-name=ppo_megatron_trainer
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=2
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=2
    data.max_prompt_length=1024
    data.max_response_length=2048
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct
    actor_rollout_ref.actor.ppo_mini_batch_size=2
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2  # recall: error
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=2
    actor_rollout_ref.actor.megatron.virtual_pipeline_model_parallel_size=2  # recall: error
    actor_rollout_ref.rollout.tensor_model_parallel_size=2
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
