#!/usr/bin/env bash
# Regression fixture: the Qwen3.5 GRPO launch as it was before verl PR #7335.
# The npu arm appends the MindSpeed-Bridge GDN flags (use_triton_gdn=False,
# use_ascend_gdn=True) unconditionally, so every Ascend run gets them, also
# on stock Megatron-LM + MindSpeed where nothing provides the Ascend GDN
# kernels. PR #7335 put them under `if [ "${USE_MINDSPEED_BRIDGE}" = "True" ]`
# (see examples/grpo_trainer/run_qwen3_5_35b_megatron.sh). Expected finding:
# gdn-flag-gate on both flag lines; nothing else.
#
# GRPO training of Qwen3.5-35B-A3B (MoE) on the geo3k geometry dataset,
# using verl's Megatron engine (model_engine=megatron) and vLLM for rollout.
#
# Hardware
#   GPU: one node with 8 GPUs of 80 GB.
#   NPU: one Atlas A3 node, 8 cards x 2 dies = 16 NPU dies (64 GB each).
#
# Requirements on GPU
#   * Megatron-LM 0.16.0 (megatron-core)
#   * mbridge
#   * flash-linear-attention (Gated Delta Net kernels)
#
# Requirements on Ascend
#   * Megatron-LM 0.16.0
#   * MindSpeed 0.16.0
#   * Megatron-Bridge de93536e
#   * base image with CANN 9.0.0, torch 2.9.0, Python 3.11
#
# Usage
#   bash tests/fixtures/regressions/gdn_flags_ungated.sh [HYDRA_OVERRIDE ...]

set -euo pipefail

# ---------------------------------------------------------------------------
# User-adjustable settings
# ---------------------------------------------------------------------------
DEVICE=${DEVICE:-$(python3 -c 'import torch_npu' 2>/dev/null && echo npu || echo gpu)}

MODEL_PATH=${MODEL_PATH:-${HOME}/models/Qwen3.5-35B-A3B}
DATA_DIR=${DATA_DIR:-${HOME}/data/geo3k}
TRAIN_FILE=${TRAIN_FILE:-${DATA_DIR}/train.parquet}
TEST_FILE=${TEST_FILE:-${DATA_DIR}/test.parquet}

PROJECT_NAME=${PROJECT_NAME:-verl_grpo_geo3k}
EXPERIMENT_NAME=${EXPERIMENT_NAME:-qwen3_5_35b_a3b_megatron_${DEVICE}}

NNODES=${NNODES:-1}

TRAIN_BATCH_SIZE=${TRAIN_BATCH_SIZE:-64}
PPO_MINI_BATCH_SIZE=${PPO_MINI_BATCH_SIZE:-16}
PPO_MICRO_BATCH_SIZE_PER_GPU=${PPO_MICRO_BATCH_SIZE_PER_GPU:-1}
LOG_PROB_MICRO_BATCH_SIZE_PER_GPU=${LOG_PROB_MICRO_BATCH_SIZE_PER_GPU:-2}
ROLLOUT_N=${ROLLOUT_N:-5}
MAX_PROMPT_LENGTH=${MAX_PROMPT_LENGTH:-1024}
MAX_RESPONSE_LENGTH=${MAX_RESPONSE_LENGTH:-2048}

ACTOR_LR=${ACTOR_LR:-1e-6}
KL_LOSS_COEF=${KL_LOSS_COEF:-0.01}
ROLLOUT_ENGINE=${ROLLOUT_ENGINE:-vllm}
GPU_MEMORY_UTILIZATION=${GPU_MEMORY_UTILIZATION:-0.6}
OFFLOAD=${OFFLOAD:-True}

TOTAL_EPOCHS=${TOTAL_EPOCHS:-15}
SAVE_FREQ=${SAVE_FREQ:-20}
TEST_FREQ=${TEST_FREQ:-5}

case "${DEVICE}" in
    gpu)
        NDEVICES_PER_NODE=${NDEVICES_PER_NODE:-8}
        TP=${TP:-2}
        PP=${PP:-1}
        CP=${CP:-1}
        EP=${EP:-8}
        ETP=${ETP:-1}
        ROLLOUT_TP=${ROLLOUT_TP:-8}
        ;;
    npu)
        NDEVICES_PER_NODE=${NDEVICES_PER_NODE:-16}
        TP=${TP:-2}
        PP=${PP:-2}
        CP=${CP:-1}
        EP=${EP:-8}
        ETP=${ETP:-1}
        ROLLOUT_TP=${ROLLOUT_TP:-8}
        ;;
    *)
        echo "DEVICE must be 'gpu' or 'npu', got '${DEVICE}'" >&2
        exit 1
        ;;
esac

# ---------------------------------------------------------------------------
# Hydra overrides, grouped by concern
# ---------------------------------------------------------------------------
ENGINE=(
    model_engine=megatron
)

DATA=(
    data.train_files="${TRAIN_FILE}"
    data.val_files="${TEST_FILE}"
    data.train_batch_size="${TRAIN_BATCH_SIZE}"
    data.max_prompt_length="${MAX_PROMPT_LENGTH}"
    data.max_response_length="${MAX_RESPONSE_LENGTH}"
    data.image_key=images
    data.filter_overlong_prompts=True
    data.truncation=error
)

MODEL=(
    actor_rollout_ref.model.path="${MODEL_PATH}"
)

ACTOR=(
    actor_rollout_ref.actor.optim.lr="${ACTOR_LR}"
    actor_rollout_ref.actor.ppo_mini_batch_size="${PPO_MINI_BATCH_SIZE}"
    actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu="${PPO_MICRO_BATCH_SIZE_PER_GPU}"
    actor_rollout_ref.actor.use_dynamic_bsz=False
    actor_rollout_ref.actor.use_kl_loss=True
    actor_rollout_ref.actor.kl_loss_coef="${KL_LOSS_COEF}"
    actor_rollout_ref.actor.kl_loss_type=low_var_kl
    actor_rollout_ref.actor.entropy_coeff=0
    actor_rollout_ref.actor.megatron.use_mbridge=True
    actor_rollout_ref.actor.megatron.tensor_model_parallel_size="${TP}"
    actor_rollout_ref.actor.megatron.pipeline_model_parallel_size="${PP}"
    actor_rollout_ref.actor.megatron.context_parallel_size="${CP}"
    actor_rollout_ref.actor.megatron.expert_model_parallel_size="${EP}"
    actor_rollout_ref.actor.megatron.expert_tensor_parallel_size="${ETP}"
    actor_rollout_ref.actor.megatron.param_offload="${OFFLOAD}"
    actor_rollout_ref.actor.megatron.optimizer_offload="${OFFLOAD}"
    actor_rollout_ref.actor.megatron.override_transformer_config.recompute_granularity=full
    actor_rollout_ref.actor.megatron.override_transformer_config.recompute_method=uniform
    actor_rollout_ref.actor.megatron.override_transformer_config.recompute_num_layers=1
    +actor_rollout_ref.actor.megatron.override_transformer_config.moe_router_dtype=fp32
    +actor_rollout_ref.actor.megatron.override_transformer_config.moe_token_dispatcher_type=alltoall
)

ROLLOUT=(
    actor_rollout_ref.rollout.name="${ROLLOUT_ENGINE}"
    actor_rollout_ref.rollout.tensor_model_parallel_size="${ROLLOUT_TP}"
    actor_rollout_ref.rollout.gpu_memory_utilization="${GPU_MEMORY_UTILIZATION}"
    actor_rollout_ref.rollout.n="${ROLLOUT_N}"
    actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu="${LOG_PROB_MICRO_BATCH_SIZE_PER_GPU}"
)

REF=(
    actor_rollout_ref.ref.megatron.use_mbridge=True
    actor_rollout_ref.ref.megatron.tensor_model_parallel_size="${TP}"
    actor_rollout_ref.ref.megatron.pipeline_model_parallel_size="${PP}"
    actor_rollout_ref.ref.megatron.context_parallel_size="${CP}"
    actor_rollout_ref.ref.megatron.expert_model_parallel_size="${EP}"
    actor_rollout_ref.ref.megatron.expert_tensor_parallel_size="${ETP}"
    actor_rollout_ref.ref.megatron.param_offload="${OFFLOAD}"
    actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu="${LOG_PROB_MICRO_BATCH_SIZE_PER_GPU}"
)

ALGORITHM=(
    algorithm.adv_estimator=grpo
    algorithm.use_kl_in_reward=False
)

TRAINER=(
    trainer.critic_warmup=0
    trainer.logger='["console","wandb"]'
    trainer.project_name="${PROJECT_NAME}"
    trainer.experiment_name="${EXPERIMENT_NAME}"
    trainer.nnodes="${NNODES}"
    trainer.n_gpus_per_node="${NDEVICES_PER_NODE}"
    trainer.save_freq="${SAVE_FREQ}"
    trainer.test_freq="${TEST_FREQ}"
    trainer.total_epochs="${TOTAL_EPOCHS}"
)

# ---------------------------------------------------------------------------
# Device-specific additions
# ---------------------------------------------------------------------------
case "${DEVICE}" in
    gpu)
        export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-1}
        # GDN in Megatron-LM has no THD path: keep padded (BSHD) batches.
        MODEL+=(
            actor_rollout_ref.model.use_remove_padding=False
        )
        ACTOR+=(
            actor_rollout_ref.actor.megatron.use_remove_padding=False
        )
        ;;
    npu)
        export CPU_AFFINITY_CONF=${CPU_AFFINITY_CONF:-1}
        export TASK_QUEUE_ENABLE=${TASK_QUEUE_ENABLE:-1}
        export HCCL_CONNECT_TIMEOUT=${HCCL_CONNECT_TIMEOUT:-1200}
        export HCCL_EXEC_TIMEOUT=${HCCL_EXEC_TIMEOUT:-3600}
        export PYTORCH_NPU_ALLOC_CONF=${PYTORCH_NPU_ALLOC_CONF:-expandable_segments:True}
        TRAINER+=(
            trainer.device=npu
        )
        # Ascend GDN kernels instead of the Triton ones.
        ACTOR+=(
            +actor_rollout_ref.actor.megatron.override_transformer_config.use_triton_gdn=False  # expect: gdn-flag-gate
            +actor_rollout_ref.actor.megatron.override_transformer_config.use_ascend_gdn=True  # expect: gdn-flag-gate
        )
        ;;
    *)
        echo "DEVICE must be 'gpu' or 'npu', got '${DEVICE}'" >&2
        exit 1
        ;;
esac

python3 -m verl.trainer.main_ppo \
    "${ENGINE[@]}" \
    "${DATA[@]}" \
    "${MODEL[@]}" \
    "${ACTOR[@]}" \
    "${ROLLOUT[@]}" \
    "${REF[@]}" \
    "${ALGORITHM[@]}" \
    "${TRAINER[@]}" \
    "$@"
