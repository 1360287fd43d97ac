#!/usr/bin/env bash
# Weiyun1025/verl-internvl#15 (verl 0.5.0): dynamic batch size with
# ppo_max_token_len_per_gpu 16384 while prompt 8192 + response 32768 = 40960:
# AssertionError: max_token_len must be greater than the sequence length.
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=4
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=8
    data.max_prompt_length=8192
    data.max_response_length=32768
    actor_rollout_ref.model.path=OpenGVLab/InternVL3_5-4B
    actor_rollout_ref.actor.ppo_mini_batch_size=8
    actor_rollout_ref.actor.use_dynamic_bsz=True
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=16384  # recall: error
    actor_rollout_ref.rollout.tensor_model_parallel_size=2
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
