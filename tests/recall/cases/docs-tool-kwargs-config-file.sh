#!/usr/bin/env bash
# verl PR#3951 (docs, 2025-10, verl 0.6.x config): the multi-turn docs named the
# tool config actor_rollout_ref.rollout.tool_kwargs.tools_config_file; the real
# key is rollout.multi_turn.tool_config_path: Could not override
# 'actor_rollout_ref.rollout.tool_kwargs.tools_config_file'.
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=8
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=64
    data.max_prompt_length=1024
    data.max_response_length=2048
    data.return_raw_chat=True
    actor_rollout_ref.model.path=Qwen/Qwen2.5-3B-Instruct
    actor_rollout_ref.actor.ppo_mini_batch_size=32
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8
    actor_rollout_ref.rollout.name=sglang
    actor_rollout_ref.rollout.mode=async
    actor_rollout_ref.rollout.tensor_model_parallel_size=1
    actor_rollout_ref.rollout.multi_turn.enable=True
    actor_rollout_ref.rollout.tool_kwargs.tools_config_file=examples/sglang_multiturn/config/tool_config/gsm8k_tool_config.yaml  # recall: error
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
