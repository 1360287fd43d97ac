#!/usr/bin/env bash
# rllm-org/rllm#5 (reported on verl 0.2, rebuilt on 0.4.0): a DeepScaleR script sets
# rollout.val_temperature, which verl replaced by rollout.val_kwargs.temperature:
# Key 'val_temperature' is not in struct.
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=4
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=8
    data.max_prompt_length=1024
    data.max_response_length=8192
    actor_rollout_ref.model.path=deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B
    actor_rollout_ref.actor.ppo_mini_batch_size=8
    actor_rollout_ref.actor.use_dynamic_bsz=True
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=32768
    actor_rollout_ref.rollout.tensor_model_parallel_size=1
    actor_rollout_ref.rollout.temperature=0.6
    actor_rollout_ref.rollout.val_temperature=0.6  # recall: error
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
