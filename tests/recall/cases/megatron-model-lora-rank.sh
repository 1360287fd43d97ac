#!/usr/bin/env bash
# verl#3857 (verl 0.6.x): LoRA on the Megatron trainer: adding
# actor_rollout_ref.model.lora_rank=32 to a *_megatron.sh script fails with
# Could not override 'actor_rollout_ref.model.lora_rank' (ppo_megatron_trainer
# has no LoRA settings before Megatron-Bridge LoRA, verl PR#4063).
set -euo pipefail

ARGS=(
    --config-name=ppo_megatron_trainer
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=4
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=64
    data.max_prompt_length=1024
    data.max_response_length=2048
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct
    actor_rollout_ref.model.lora_rank=32  # recall: error
    actor_rollout_ref.actor.ppo_mini_batch_size=32
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2
    actor_rollout_ref.ref.megatron.tensor_model_parallel_size=2
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8
    actor_rollout_ref.rollout.tensor_model_parallel_size=2
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
