#!/usr/bin/env bash
# verl#2366 (verl 0.4.1, 2025-07): the reported Megatron + async SGLang script sets
# actor_rollout_ref.actor.megatron.offload_workflow_optim=False, a key no verl
# release has (the Megatron offload keys are param_offload, grad_offload,
# optimizer_offload): the launch cannot compose, Could not override
# 'actor_rollout_ref.actor.megatron.offload_workflow_optim'.
set -euo pipefail

ARGS=(
    --config-path=./config
    --config-name=ppo_megatron_trainer.yaml
    algorithm.adv_estimator=grpo
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=16
    data.max_prompt_length=2048
    data.max_response_length=1024
    data.return_raw_chat=True
    actor_rollout_ref.model.path=deepseek-ai/DeepSeek-R1-Distill-Qwen-7B
    actor_rollout_ref.actor.ppo_mini_batch_size=16
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4
    actor_rollout_ref.actor.megatron.offload_workflow_optim=False  # recall: error
    actor_rollout_ref.actor.megatron.param_offload=False
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2
    actor_rollout_ref.ref.megatron.tensor_model_parallel_size=2
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4
    actor_rollout_ref.rollout.name=sglang
    actor_rollout_ref.rollout.mode=async
    actor_rollout_ref.rollout.tensor_model_parallel_size=2
    actor_rollout_ref.rollout.n=4
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
