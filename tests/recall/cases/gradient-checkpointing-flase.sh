#!/usr/bin/env bash
# verl#1501 (reported on verl 0.3, 2025-05; rebuilt on 0.4.0): the reported GRPO
# script writes actor_rollout_ref.model.enable_gradient_checkpointing=Flase. The
# key is not typed in 0.4.0, so the string reaches the FSDP worker, whose
# `if enable_gradient_checkpointing:` takes any non-empty string as on: the
# setting silently does the opposite of what was meant.
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=5
    data.train_files=data/gsm8k/train.parquet
    data.val_files=data/gsm8k/test.parquet
    data.train_batch_size=1024
    data.max_prompt_length=512
    data.max_response_length=1024
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct
    actor_rollout_ref.model.use_remove_padding=True
    actor_rollout_ref.model.enable_gradient_checkpointing=Flase  # recall: error
    actor_rollout_ref.actor.ppo_mini_batch_size=256
    actor_rollout_ref.actor.use_dynamic_bsz=True
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=24000
    actor_rollout_ref.rollout.tensor_model_parallel_size=2
    actor_rollout_ref.rollout.gpu_memory_utilization=0.8
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=15
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
