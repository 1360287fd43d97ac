#!/bin/bash
# A realistic GRPO script: MODE case small|large x DEVICE probe case gpu/npu, exported defaults, derived sizes, "$@" last.
# profiles: DEVICE=gpu,npu MODE=small,large
set -xeuo pipefail

DEVICE=${DEVICE:-$(python3 -c 'import torch_npu' 2>/dev/null && echo npu || echo gpu)}
MODE=${MODE:-small}
export VLLM_USE_V1=1

case "$MODE" in
    small)
        MODEL_PATH=Qwen/Qwen2.5-0.5B-Instruct
        NNODES=1
        ROLLOUT_TP=1
        ;;
    large)
        MODEL_PATH=Qwen/Qwen2.5-32B-Instruct
        NNODES=2
        ROLLOUT_TP=8
        ;;
esac

case "$DEVICE" in
    npu) N_DEVICES=16; DEVICE_NAME=npu ;;
    *)   N_DEVICES=8;  DEVICE_NAME=cuda ;;
esac

TRAIN_BATCH=$(( N_DEVICES * NNODES * 4 ))
MINI_BATCH=$(( TRAIN_BATCH / 4 ))

python3 -m verl.trainer.main_ppo \
    algorithm.adv_estimator=grpo \
    data.train_files="$HOME/data/gsm8k/train.parquet" \
    data.val_files="$HOME/data/gsm8k/test.parquet" \
    data.train_batch_size=$TRAIN_BATCH \
    data.max_prompt_length=512 \
    data.max_response_length=1024 \
    actor_rollout_ref.model.path="$MODEL_PATH" \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.actor.ppo_mini_batch_size=$MINI_BATCH \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.n=5 \
    actor_rollout_ref.rollout.tensor_model_parallel_size=$ROLLOUT_TP \
    trainer.device=$DEVICE_NAME \
    trainer.logger='["console"]' \
    trainer.project_name=verl_grpo_example_gsm8k \
    trainer.experiment_name="qwen2.5_${MODE}_${DEVICE}" \
    trainer.n_gpus_per_node=$N_DEVICES \
    trainer.nnodes=$NNODES \
    trainer.total_epochs=15 "$@"
