#!/usr/bin/env bash
# Jiayi-Pan/TinyZero#5 (TinyZero's own verl copy, 2025-01): the README has users
# export ROLLOUT_TP_SIZE before running the script; the reporter did not, so the
# launch received actor_rollout_ref.rollout.tensor_model_parallel_size= (empty)
# and the FSDP worker failed building the rollout mesh: unsupported operand
# type(s) for //: 'int' and 'str'.
set -eo pipefail

N_GPUS=1
BASE_MODEL=Qwen/Qwen2.5-1.5B

ARGS=(
    algorithm.adv_estimator=gae
    data.train_files="${HOME}/data/countdown/train.parquet"
    data.val_files="${HOME}/data/countdown/test.parquet"
    data.train_batch_size=256
    data.max_prompt_length=256
    data.max_response_length=1024
    actor_rollout_ref.model.path=$BASE_MODEL
    critic.model.path=$BASE_MODEL
    actor_rollout_ref.actor.ppo_mini_batch_size=128
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8
    critic.ppo_micro_batch_size_per_gpu=8
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4
    actor_rollout_ref.rollout.tensor_model_parallel_size=$ROLLOUT_TP_SIZE  # recall: warning
    actor_rollout_ref.rollout.gpu_memory_utilization=0.4
    trainer.logger=[console]
    trainer.nnodes=1
    trainer.n_gpus_per_node=$N_GPUS
    trainer.total_epochs=15
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
