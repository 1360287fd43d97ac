#!/usr/bin/env bash
# RUC-NLPIR/ARPO#16 (ARPO's verl, the 0.4.0 checks): ARPO_7B_Reasoning_1node.sh
# passes actor_rollout_ref.rollout.multi_turn.enable=${ENABLE_MULTI_TURN} but
# never sets ENABLE_MULTI_TURN; the launch gets an empty value, which verl's
# `if ...multi_turn.enable:` reads as off: multi-turn is silently disabled.
set -eo pipefail

ARGS=(
    algorithm.adv_estimator=grpo
    actor_rollout_ref.rollout.n=8
    data.train_files="${HOME}/data/reasoning/train.parquet"
    data.val_files="${HOME}/data/reasoning/test.parquet"
    data.train_batch_size=64
    data.max_prompt_length=1536
    data.max_response_length=4096
    data.return_raw_chat=True
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct
    actor_rollout_ref.actor.ppo_mini_batch_size=32
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4
    actor_rollout_ref.rollout.name=sglang
    actor_rollout_ref.rollout.tensor_model_parallel_size=2
    actor_rollout_ref.rollout.multi_turn.enable=${ENABLE_MULTI_TURN}  # recall: warning
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
