#!/usr/bin/env bash
# verl#189 (reported on verl 0.2, rebuilt on 0.4.0): GRPO with 1024 + 8192 tokens
# and the default max_num_batched_tokens 8192 while chunked prefill is on;
# verl raises "Enable chunked prefill, max_num_batched_tokens is smaller than
# max_model_len" when the vLLM rollout is built.
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=4
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=32
    data.max_prompt_length=1024
    data.max_response_length=8192  # recall: error
    actor_rollout_ref.model.path=deepseek-ai/DeepSeek-R1-Distill-Qwen-32B
    actor_rollout_ref.actor.ppo_mini_batch_size=32
    actor_rollout_ref.actor.use_dynamic_bsz=True
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=16384
    actor_rollout_ref.rollout.tensor_model_parallel_size=8
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
