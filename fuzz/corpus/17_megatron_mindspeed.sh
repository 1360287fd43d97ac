#!/bin/bash
# Megatron launch with --config-path=config --config-name=ppo_megatron_trainer; DEVICE x USE_MINDSPEED_BRIDGE profiles; a new key with +.
# profiles: DEVICE=gpu,npu USE_MINDSPEED_BRIDGE=False,True
set -x
DEVICE=${DEVICE:-gpu}
USE_MINDSPEED_BRIDGE=${USE_MINDSPEED_BRIDGE:-False}

GPUS_PER_NODE=8
TP=2
PP=1

if [ "$DEVICE" = npu ]; then
    GPUS_PER_NODE=16
    DEVICE_ARGS=(trainer.device=npu +actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True)
else
    DEVICE_ARGS=(trainer.device=cuda)
fi

if [ "$USE_MINDSPEED_BRIDGE" = True ]; then
    BRIDGE_ARGS=(actor_rollout_ref.actor.megatron.use_mbridge=True actor_rollout_ref.actor.megatron.vanilla_mbridge=False)
    TP=$((TP * 2))
else
    BRIDGE_ARGS=(actor_rollout_ref.actor.megatron.use_mbridge=True)
fi

python3 -m verl.trainer.main_ppo --config-path=config --config-name=ppo_megatron_trainer \
    algorithm.adv_estimator=grpo \
    data.train_batch_size=128 \
    data.max_prompt_length=1024 \
    data.max_response_length=2048 \
    actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \
    actor_rollout_ref.actor.optim.lr=1e-6 \
    actor_rollout_ref.actor.ppo_mini_batch_size=32 \
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size=$TP \
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size=$PP \
    actor_rollout_ref.rollout.name=vllm \
    actor_rollout_ref.rollout.tensor_model_parallel_size=$TP \
    "${DEVICE_ARGS[@]}" \
    "${BRIDGE_ARGS[@]}" \
    trainer.n_gpus_per_node=$GPUS_PER_NODE \
    trainer.nnodes=1 \
    trainer.project_name=verl_megatron \
    trainer.experiment_name=qwen7b_${DEVICE}_mbridge_${USE_MINDSPEED_BRIDGE} \
    "$@"
