#!/usr/bin/env bash
# RLHFlow/Online-DPO-R1#2 (reported on verl 0.2, rebuilt on 0.4.0): Qwen2.5-Math-7B
# has max_position_embeddings 4096, the script asks for 1024 + 4000 tokens; the
# vLLM rollout asserts "model context length should be greater than total
# sequence length".
set -euo pipefail

ARGS=(
    algorithm.adv_estimator=gae
    data.train_files="${HOME}/data/gsm8k/train.parquet"
    data.val_files="${HOME}/data/gsm8k/test.parquet"
    data.train_batch_size=64
    data.max_prompt_length=1024
    data.max_response_length=4000  # recall: error
    actor_rollout_ref.model.path=/models/Qwen2.5-Math-7B
    critic.model.path=/models/Qwen2.5-Math-7B
    critic.ppo_micro_batch_size_per_gpu=2
    actor_rollout_ref.actor.ppo_mini_batch_size=32
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4
    actor_rollout_ref.rollout.tensor_model_parallel_size=2
    trainer.nnodes=1
    trainer.n_gpus_per_node=8
    trainer.total_epochs=1
)

python3 -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
