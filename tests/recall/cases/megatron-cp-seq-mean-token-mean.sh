#!/usr/bin/env bash
# verl#7914 (verl 0.9.0): Megatron engine with context parallel 2 (Megatron-Bridge
# turns on calculate_per_token_loss) and loss_agg_mode seq-mean-token-mean; the
# first actor update raises ValueError: loss_agg_mode='seq-mean-token-mean' is
# incompatible with calculate_per_token_loss=True.
set -euo pipefail

ARGS=(
    model_engine=megatron
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=8
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=32
    data.max_prompt_length=1024
    data.max_response_length=2048
    actor_rollout_ref.model.path=Qwen/Qwen3.5-9B
    actor_rollout_ref.actor.policy_loss.loss_mode=gspo
    actor_rollout_ref.actor.loss_agg_mode=seq-mean-token-mean  # recall: error
    actor_rollout_ref.actor.ppo_mini_batch_size=16
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=8
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=1
    actor_rollout_ref.actor.megatron.context_parallel_size=2  # recall: error
    actor_rollout_ref.actor.megatron.use_remove_padding=True
    actor_rollout_ref.rollout.tensor_model_parallel_size=8
    trainer.nnodes=2
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
