#!/usr/bin/env bash
# verl PR#6429 (verl 0.8.0): two Ascend Megatron scripts kept use_mbridge=False for
# actor and ref; the Megatron engine asserts "use_mbridge must be True" when it
# starts.
set -euo pipefail

ARGS=(
    --config-name=ppo_megatron_trainer
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=8
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=32
    data.max_prompt_length=2048
    data.max_response_length=8192
    actor_rollout_ref.model.path=Qwen/Qwen3-30B-A3B
    actor_rollout_ref.actor.ppo_mini_batch_size=16
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=2
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=2
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=4
    actor_rollout_ref.actor.megatron.expert_model_parallel_size=4
    actor_rollout_ref.actor.megatron.use_mbridge=False  # recall: error
    actor_rollout_ref.ref.megatron.use_mbridge=False  # recall: error
    actor_rollout_ref.rollout.tensor_model_parallel_size=4
    trainer.device=npu
    trainer.nnodes=1
    trainer.n_gpus_per_node=16
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
