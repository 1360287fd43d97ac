#!/usr/bin/env bash
# verl#1873 (verl 0.4.0): a model with max_position_embeddings 4096, prompt 2048 +
# response 8192; the vLLM rollout asserts "model context length should be greater
# than total sequence length". The model's config.json is in
# tests/recall/models/reported-ctx4096 (only the number the reporter gave).
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=4
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=64
    data.max_prompt_length=2048
    data.max_response_length=8192  # recall: error
    actor_rollout_ref.model.path=/models/reported-ctx4096
    actor_rollout_ref.actor.ppo_mini_batch_size=32
    actor_rollout_ref.actor.use_dynamic_bsz=True
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=16384
    actor_rollout_ref.rollout.tensor_model_parallel_size=2
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
