#!/usr/bin/env bash
# verl#1226 (reported on verl 0.3, rebuilt on 0.4.0): Qwen2.5-14B has 40 attention
# heads; Ulysses sequence parallel 16 does not divide them: AssertionError:
# num_attention_heads 40 must be divisible by ulysses_sp_size 16.
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=4
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=64
    data.max_prompt_length=2048
    data.max_response_length=62000
    actor_rollout_ref.model.path=/models/Qwen2.5-14B
    actor_rollout_ref.model.use_remove_padding=True
    actor_rollout_ref.actor.ppo_mini_batch_size=32
    actor_rollout_ref.actor.use_dynamic_bsz=True
    actor_rollout_ref.actor.ppo_max_token_len_per_gpu=8192
    actor_rollout_ref.actor.ulysses_sequence_parallel_size=16  # recall: error
    actor_rollout_ref.rollout.tensor_model_parallel_size=8
    trainer.nnodes=2
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
